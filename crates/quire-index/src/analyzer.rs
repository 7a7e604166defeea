//! The text analyzer of the full-text index.
//!
//! As Obsidian-Copilot's BM25 index: HTML is stripped before indexing (see [`strip_html`]), the
//! possessive `'s` is dropped, English stop words (Lucene's list, as Elasticsearch uses) are removed,
//! and words are stemmed: by the Snowball stemmer of their script's language where a script has
//! one language Snowball knows (Greek, Russian for Cyrillic, Arabic), else the English one (see
//! [`ScriptStemmer`]). Scripts written
//! without spaces between words (Chinese, Japanese, Thai) are cut into overlapping character
//! bigrams, the usual dictionary-free way to make them searchable; a lone character is kept as is.

use std::sync::LazyLock;

use frostem::Algorithm;
use quire_vault::parse::is_cjk;
use tantivy::tokenizer::{
    Language, LowerCaser, RemoveLongFilter, StopWordFilter, TextAnalyzer, Token, TokenFilter,
    TokenStream, Tokenizer,
};

/// The name the analyzer is registered under in the index.
pub const ANALYZER: &str = "quire_text";

/// The version of the terms [`text_analyzer`] makes. An index whose full text was built with
/// another version rebuilds it from the store (nothing is chunked or embedded again).
/// 1: English stemming only; 2: Greek, Cyrillic and Arabic words stemmed in their language.
pub const ANALYZER_VERSION: u32 = 2;

/// Builds the analyzer: words and CJK bigrams → length cap → lowercase → stop words → stemmer.
pub fn text_analyzer() -> TextAnalyzer {
    let builder = TextAnalyzer::builder(WordTokenizer)
        .filter(RemoveLongFilter::limit(48))
        .filter(LowerCaser);
    match StopWordFilter::new(Language::English) {
        Some(stop) => builder.filter(stop).filter(ScriptStemmer).build(),
        None => builder.filter(ScriptStemmer).build(),
    }
}

/// Stems each word with the Snowball stemmer of its script's language: Greek for Greek letters,
/// Russian for Cyrillic, Arabic for Arabic script, English for anything else (Latin-script
/// words cannot be told apart by language without a language detector, and English is the
/// vault's most common language). Written here because tantivy's `Stemmer` takes one language
/// per analyzer, and a vault mixes languages note by note, often line by line.
#[derive(Clone, Copy, Debug, Default)]
pub struct ScriptStemmer;

/// The Snowball algorithm for `word`, by the script of its first letter.
fn algorithm_for(word: &str) -> Algorithm {
    let first = word.chars().find(|c| c.is_alphabetic()).unwrap_or('a');
    match first as u32 {
        0x0370..=0x03FF | 0x1F00..=0x1FFF => Algorithm::Greek,
        0x0400..=0x052F => Algorithm::Russian,
        0x0600..=0x06FF | 0x0750..=0x077F => Algorithm::Arabic,
        _ => Algorithm::English,
    }
}

impl TokenFilter for ScriptStemmer {
    type Tokenizer<T: Tokenizer> = ScriptStemmerFilter<T>;

    fn transform<T: Tokenizer>(self, tokenizer: T) -> ScriptStemmerFilter<T> {
        ScriptStemmerFilter { inner: tokenizer }
    }
}

/// [`ScriptStemmer`] over a tokenizer.
#[derive(Clone)]
pub struct ScriptStemmerFilter<T> {
    inner: T,
}

impl<T: Tokenizer> Tokenizer for ScriptStemmerFilter<T> {
    type TokenStream<'a> = ScriptStemmerStream<T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        ScriptStemmerStream {
            tail: self.inner.token_stream(text),
            stemmers: Vec::new(),
        }
    }
}

/// The tokens of a [`ScriptStemmerFilter`], each stemmed; a stemmer is made the first time its
/// language is met in the text.
pub struct ScriptStemmerStream<T> {
    tail: T,
    stemmers: Vec<(Algorithm, frostem::Stemmer)>,
}

impl<T: TokenStream> TokenStream for ScriptStemmerStream<T> {
    fn advance(&mut self) -> bool {
        if !self.tail.advance() {
            return false;
        }
        let token = self.tail.token_mut();
        let algorithm = algorithm_for(&token.text);
        let at = match self.stemmers.iter().position(|(a, _)| *a == algorithm) {
            Some(at) => at,
            None => {
                self.stemmers
                    .push((algorithm, frostem::Stemmer::new(algorithm)));
                self.stemmers.len() - 1
            }
        };
        if let std::borrow::Cow::Owned(stemmed) = self.stemmers[at].1.stem(&token.text) {
            token.text = stemmed;
        }
        true
    }

    fn token(&self) -> &Token {
        self.tail.token()
    }

    fn token_mut(&mut self) -> &mut Token {
        self.tail.token_mut()
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
    ANALYZER.with_borrow_mut(|analyzer| terms_of(analyzer, text, |_| true))
}

/// The terms `analyzer` makes of `text` that `keep` keeps, in order.
fn terms_of(analyzer: &mut TextAnalyzer, text: &str, keep: impl Fn(&str) -> bool) -> Vec<String> {
    let mut stream = analyzer.token_stream(text);
    let mut terms = Vec::new();
    while stream.advance() {
        let term = &stream.token().text;
        if keep(term) {
            terms.push(term.clone());
        }
    }
    terms
}

/// Words that carry no topic or claim beyond the index's stop words: question words, the
/// function words of how people ask and answer, and how an answer refers to the notes; also
/// Russian function words. [`content_terms`] leaves them out.
pub const CONTENTLESS_WORDS: &[&str] = &[
    "about",
    "according",
    "after",
    "all",
    "also",
    "am",
    "any",
    "before",
    "being",
    "both",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "each",
    "every",
    "from",
    "get",
    "had",
    "has",
    "have",
    "here",
    "how",
    "i",
    "its",
    "just",
    "may",
    "me",
    "mentions",
    "might",
    "more",
    "most",
    "much",
    "must",
    "my",
    "note",
    "notes",
    "only",
    "other",
    "our",
    "same",
    "says",
    "should",
    "so",
    "some",
    "than",
    "them",
    "those",
    "use",
    "used",
    "using",
    "very",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "would",
    "you",
    "your",
    "yours",
    "и",
    "в",
    "во",
    "на",
    "что",
    "как",
    "я",
    "мы",
    "мой",
    "моя",
    "мои",
    "это",
    "ли",
    "не",
    "по",
    "с",
    "со",
    "к",
    "о",
    "об",
    "у",
    "за",
    "из",
    "для",
    "чем",
    "где",
    "когда",
    "так",
    "его",
    "она",
    "они",
    "был",
    "была",
];

/// Chinese and Japanese characters too common to carry content: a term made of them only is
/// left out by [`content_terms`].
pub const CONTENTLESS_CJK: &[char] = &[
    '的', '了', '是', '在', '和', '也', '有', '我', '你', '他', '这', '那', '就', '都', '不', '一',
    '个', 'の', 'は', 'が', 'を', 'に', 'で', 'と', 'た', 'し', 'て', 'い', 'す', 'る', 'な', 'か',
    'も', 'ま',
];

/// The terms of `text` that carry what it is about, for comparing a question or a claim with a
/// passage: the index's terms ([`analyze`]: lowercased, stemmed in their script's language, CJK
/// as bigrams), without [`CONTENTLESS_WORDS`], words under three letters (numbers stay: "22",
/// "7") and CJK terms made only of [`CONTENTLESS_CJK`] characters.
pub fn content_terms(text: &str) -> Vec<String> {
    thread_local! {
        static ANALYZER: std::cell::RefCell<TextAnalyzer> =
            std::cell::RefCell::new(content_analyzer());
    }
    ANALYZER.with_borrow_mut(|analyzer| {
        terms_of(analyzer, text, |term| {
            if term.chars().any(is_cjk) {
                !term.chars().all(|c| CONTENTLESS_CJK.contains(&c))
            } else {
                term.chars().all(|c| c.is_ascii_digit()) || term.chars().count() >= 3
            }
        })
    })
}

/// [`text_analyzer`] with [`CONTENTLESS_WORDS`] as stop words too (removed before stemming, as
/// the index's are).
fn content_analyzer() -> TextAnalyzer {
    let builder = TextAnalyzer::builder(WordTokenizer)
        .filter(RemoveLongFilter::limit(48))
        .filter(LowerCaser)
        .filter(StopWordFilter::remove(
            CONTENTLESS_WORDS.iter().map(|w| w.to_string()),
        ));
    match StopWordFilter::new(Language::English) {
        Some(stop) => builder.filter(stop).filter(ScriptStemmer).build(),
        None => builder.filter(ScriptStemmer).build(),
    }
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
    fn content_terms_leave_out_question_words_short_words_and_common_cjk() {
        assert_eq!(
            content_terms("How often do I feed my starter? It is fed at 22 °C, once a day"),
            vec!["often", "feed", "starter", "fed", "22", "onc", "day"]
        );
        // The same stems as the index's terms: inflections meet.
        assert_eq!(content_terms("shoes"), content_terms("shoe"));
        assert_eq!(content_terms("книги"), content_terms("книга"));
        // CJK bigrams, those of common characters only left out.
        assert_eq!(content_terms("我的乌龙茶"), vec!["的乌", "乌龙", "龙茶"]);
    }

    #[test]
    fn other_scripts_are_words() {
        assert_eq!(analyze("नमस्ते दुनिया"), vec!["नमस्ते", "दुनिया"]);
        assert_eq!(analyze("Кошка спит").len(), 2);
    }

    #[test]
    fn greek_cyrillic_and_arabic_words_are_stemmed_in_their_language() {
        // Inflected forms meet at one term, as English ones do.
        let same = |a: &str, b: &str| {
            let (x, y) = (analyze(a), analyze(b));
            assert_eq!(x, y, "{a} / {b}");
            assert_eq!(x.len(), 1, "{a}");
        };
        same("πόλη", "πόλης");
        same("Κυβέρνηση", "κυβέρνησης");
        same("книга", "книги");
        same("библиотеке", "библиотека");
        same("المكتبة", "مكتبة");
        // A mixed line: each word by its own script; English words as before.
        let mixed = analyze("running στις πόλεις");
        assert_eq!(mixed[0], "run");
        assert_eq!(mixed.len(), 3);
        assert_ne!(mixed[2], "πόλεις", "{mixed:?}");
    }
}
