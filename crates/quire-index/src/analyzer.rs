//! The text analyzer of the full-text index.
//!
//! As Obsidian-Copilot's BM25 index: HTML is stripped before indexing (see [`strip_html`]), the
//! possessive `'s` is dropped, English stop words (Lucene's list, as Elasticsearch uses) are removed,
//! and words are stemmed. Scripts written
//! without spaces between words (Chinese, Japanese, Thai) are cut into overlapping character
//! bigrams, the usual dictionary-free way to make them searchable; a lone character is kept as is.

use std::sync::LazyLock;

use quire_vault::parse::is_cjk;
use tantivy::tokenizer::{
    Language, LowerCaser, RemoveLongFilter, Stemmer, StopWordFilter, TextAnalyzer, Token,
    TokenStream, Tokenizer,
};

/// The name the analyzer is registered under in the index.
pub const ANALYZER: &str = "quire_text";

/// Builds the analyzer: words and CJK bigrams → length cap → lowercase → stop words → stemmer.
pub fn text_analyzer() -> TextAnalyzer {
    let builder = TextAnalyzer::builder(WordTokenizer)
        .filter(RemoveLongFilter::limit(48))
        .filter(LowerCaser);
    match StopWordFilter::new(Language::English) {
        Some(stop) => builder
            .filter(stop)
            .filter(Stemmer::new(Language::English))
            .build(),
        None => builder.filter(Stemmer::new(Language::English)).build(),
    }
}

/// Replaces HTML tags with spaces (offsets are not needed downstream, so length may change).
pub fn strip_html(text: &str) -> std::borrow::Cow<'_, str> {
    static TAG: LazyLock<regex::Regex> =
        LazyLock::new(|| regex::Regex::new(r"</?[A-Za-z][^<>\n]{0,200}>").expect("static regex"));
    if !text.contains('<') {
        return std::borrow::Cow::Borrowed(text);
    }
    TAG.replace_all(text, " ")
}

/// Splits text into words (letters and digits of any script, with inner apostrophes) and CJK/Thai
/// character bigrams.
#[derive(Clone, Copy, Debug, Default)]
pub struct WordTokenizer;

/// The tokens of one text, made by [`WordTokenizer`] up front and handed to tantivy in order.
pub struct VecTokenStream {
    tokens: Vec<Token>,
    next: usize,
}

impl TokenStream for VecTokenStream {
    fn advance(&mut self) -> bool {
        self.next += 1;
        self.next <= self.tokens.len()
    }
    fn token(&self) -> &Token {
        &self.tokens[self.next - 1]
    }
    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.next - 1]
    }
}

impl Tokenizer for WordTokenizer {
    type TokenStream<'a> = VecTokenStream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> VecTokenStream {
        VecTokenStream {
            tokens: tokenize(text),
            next: 0,
        }
    }
}

fn push(tokens: &mut Vec<Token>, text: &str, from: usize, to: usize) {
    let position = tokens.len();
    tokens.push(Token {
        offset_from: from,
        offset_to: to,
        position,
        text: text[from..to].to_string(),
        position_length: 1,
    });
}

/// The tokens of `text` before filters (exposed for tests and for query analysis).
pub fn tokenize(text: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut word_start: Option<usize> = None;
    let mut cjk: Vec<(usize, char)> = Vec::new();
    let flush_word = |tokens: &mut Vec<Token>, start: &mut Option<usize>, end: usize| {
        if let Some(s) = start.take() {
            let mut word = &text[s..end];
            // Apostrophes only inside a word; a possessive 's is dropped.
            word = word.trim_end_matches(['\'', '’']);
            for suffix in ["'s", "’s", "'S", "’S"] {
                if let Some(w) = word.strip_suffix(suffix) {
                    word = w;
                }
            }
            let lead = word.len() - word.trim_start_matches(['\'', '’']).len();
            if word.len() > lead {
                push(tokens, text, s + lead, s + word.len());
            }
        }
    };
    let flush_cjk = |tokens: &mut Vec<Token>, run: &mut Vec<(usize, char)>| {
        match run.len() {
            0 => {}
            1 => push(tokens, text, run[0].0, run[0].0 + run[0].1.len_utf8()),
            _ => {
                for pair in run.windows(2) {
                    push(tokens, text, pair[0].0, pair[1].0 + pair[1].1.len_utf8());
                }
            }
        }
        run.clear();
    };
    for (i, c) in text.char_indices() {
        if is_cjk(c) {
            flush_word(&mut tokens, &mut word_start, i);
            cjk.push((i, c));
        } else if c.is_alphanumeric()
            || ((c == '\'' || c == '’') && word_start.is_some())
            || is_mark(c)
        {
            flush_cjk(&mut tokens, &mut cjk);
            if word_start.is_none() {
                word_start = Some(i);
            }
        } else {
            flush_word(&mut tokens, &mut word_start, i);
            flush_cjk(&mut tokens, &mut cjk);
        }
    }
    flush_word(&mut tokens, &mut word_start, text.len());
    flush_cjk(&mut tokens, &mut cjk);
    tokens
}

/// Combining marks belong to the word they follow (Devanagari, Thai vowel signs, accents).
fn is_mark(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F | 0x0900..=0x0903 | 0x093A..=0x094F | 0x0951..=0x0957 | 0x0962..=0x0963 | 0x0981..=0x0983 | 0x064B..=0x065F)
}

/// The analyzed terms of `text`, as the index stores them.
pub fn analyze(text: &str) -> Vec<String> {
    thread_local! {
        // Building an analyzer (its stop-word set, its stemmer) costs far more than analyzing
        // a word, and snippets analyze their text word by word: one analyzer per thread.
        static ANALYZER: std::cell::RefCell<TextAnalyzer> =
            std::cell::RefCell::new(text_analyzer());
    }
    ANALYZER.with_borrow_mut(|analyzer| {
        let mut stream = analyzer.token_stream(text);
        let mut terms = Vec::new();
        while stream.advance() {
            terms.push(stream.token().text.clone());
        }
        terms
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn english_is_stemmed_without_stop_words_or_possessives() {
        assert_eq!(
            analyze("The runner's shoes are running"),
            vec!["runner", "shoe", "run"]
        );
        assert_eq!(
            analyze("don't <b>stop</b>"),
            vec!["don't", "b", "stop", "b"]
        );
        assert_eq!(
            analyze(&strip_html("don't <b>stop</b>")),
            vec!["don't", "stop"]
        );
    }

    #[test]
    fn cjk_and_thai_become_bigrams() {
        assert_eq!(analyze("乌龙茶"), vec!["乌龙", "龙茶"]);
        assert_eq!(analyze("茶 tea"), vec!["茶", "tea"]);
        assert_eq!(analyze("京都へ行く"), vec!["京都", "都へ", "へ行", "行く"]);
        assert_eq!(analyze("ภาษาไทย").len(), 6);
    }

    #[test]
    fn other_scripts_are_words() {
        assert_eq!(analyze("Кошка спит"), vec!["кошка", "спит"]);
        assert_eq!(analyze("नमस्ते दुनिया"), vec!["नमस्ते", "दुनिया"]);
    }
}
