//! Parsing Obsidian-flavoured Markdown: each rule with a small document.

#![allow(clippy::unwrap_used)] // tests and benches stop at the first surprise
#![allow(clippy::type_complexity)] // tuples of expected values read best inline in these tests

use quire_vault::daily::DailyNotes;
use quire_vault::{LinkKind, ParseOptions, TagSource, parse_note};

fn parse(text: &str) -> quire_vault::Note {
    parse_note("Folder/Note.md", text, &ParseOptions::default())
}

/// Each link as (kind, target, subpath, display, line).
fn link_rows(note: &quire_vault::Note) -> Vec<(LinkKind, &str, Option<&str>, Option<&str>, usize)> {
    note.links
        .iter()
        .map(|l| {
            (
                l.kind,
                l.target.as_str(),
                l.subpath.as_deref(),
                l.display.as_deref(),
                l.line,
            )
        })
        .collect()
}

fn tag_names(note: &quire_vault::Note) -> Vec<&str> {
    note.tags.iter().map(|t| t.name.as_str()).collect()
}

#[test]
fn headings_have_levels_lines_and_section_ends() {
    let text = "# Title\nintro\n## A\na\n### A1\na1\n## B\nb\n\nSetext\n------\nlast\n";
    let note = parse(text);
    let got: Vec<(u8, &str, usize, usize)> = note
        .headings
        .iter()
        .map(|h| (h.level, h.text.as_str(), h.line, h.end_line))
        .collect();
    assert_eq!(
        got,
        vec![
            (1, "Title", 1, 12),
            (2, "A", 3, 6),
            (3, "A1", 5, 6),
            (2, "B", 7, 9),
            (2, "Setext", 10, 12)
        ]
    );
    assert_eq!(note.title, "Title");
    assert_eq!(note.line_count, 12);
}

#[test]
fn no_headings_in_code_fences_frontmatter_or_comments() {
    let text = "---\ntitle: x\n# not: heading\n---\n```bash\n# comment\n```\n%%\n# hidden\n%%\n    # indented code\n## Real\n";
    let note = parse(text);
    assert_eq!(note.headings.len(), 1);
    assert_eq!(note.headings[0].text, "Real");
    assert_eq!(note.headings[0].line, 12);
    assert_eq!(note.body_start_line, 5);
    assert_eq!(note.title, "Note", "no H1: the file name is the title");
}

#[test]
fn wikilinks_embeds_and_markdown_links() {
    let text = "See [[Other Note#Part^x|shown]] and ![[pic.png]] and ![[Doc#Sec]].\n\
                [local](Sub%20Dir/File.md#h) [web](https://example.org/a#frag) [[#Own heading]]\n\
                ![img](../img/a.png) [mail](mailto:a@b.c)\n";
    let note = parse(text);
    assert_eq!(
        link_rows(&note),
        vec![
            (
                LinkKind::Wiki,
                "Other Note",
                Some("Part^x"),
                Some("shown"),
                1
            ),
            (LinkKind::Embed, "pic.png", None, None, 1),
            (LinkKind::Embed, "Doc", Some("Sec"), None, 1),
            (
                LinkKind::Markdown,
                "Sub Dir/File.md",
                Some("h"),
                Some("local"),
                2
            ),
            (LinkKind::Wiki, "", Some("Own heading"), None, 2),
            (
                LinkKind::MarkdownEmbed,
                "../img/a.png",
                None,
                Some("img"),
                3
            ),
        ]
    );
}

#[test]
fn links_in_code_are_not_links() {
    let note = parse("`[[NotALink]]`\n\n```\n[[AlsoNot]]\n```\n[[Yes]]\n");
    let targets: Vec<&str> = note.links.iter().map(|l| l.target.as_str()).collect();
    assert_eq!(targets, vec!["Yes"]);
    assert_eq!(note.links[0].line, 6);
}

#[test]
fn tags_follow_obsidian_rules() {
    // `(#paren)` is text: see `a_tag_starts_a_line_or_follows_white_space`.
    let text = "---\ntags: [fm, 'two/levels']\n---\n#start and #a/b-c, (#paren) #数据 #чтение\n\
                not: issue #123, x#glued, `#code`, https://e.org/#frag, [[Note#Heading]]\n\
                ```\n#fenced\n```\n%%#commented%%\n#2026y ok\n";
    let note = parse(text);
    assert_eq!(
        tag_names(&note),
        vec![
            "fm",
            "two/levels",
            "start",
            "a/b-c",
            "数据",
            "чтение",
            "2026y"
        ]
    );
    assert_eq!(note.tags[0].source, TagSource::Frontmatter);
    assert_eq!(note.tags[2].source, TagSource::Inline);
    assert_eq!(note.tags[2].line, 4);
    assert_eq!(note.tags.last().unwrap().line, 10);
}

#[test]
fn callouts_tasks_and_block_ids() {
    let text = "> [!warning]- Be careful\n> body line\n\n> [!NOTE]\n> plain\n\n\
                - [ ] open task\n- [x] done task ^done-1\n  - [/] nested in progress\n\n\
                A paragraph with an id. ^para\n";
    let note = parse(text);
    let callouts: Vec<(&str, Option<&str>, Option<char>, usize, usize)> = note
        .callouts
        .iter()
        .map(|c| {
            (
                c.kind.as_str(),
                c.title.as_deref(),
                c.fold,
                c.line,
                c.end_line,
            )
        })
        .collect();
    assert_eq!(
        callouts,
        vec![
            ("warning", Some("Be careful"), Some('-'), 1, 2),
            ("note", None, None, 4, 5)
        ]
    );
    let tasks: Vec<(usize, char, bool, &str)> = note
        .tasks
        .iter()
        .map(|t| (t.line, t.status, t.done, t.text.as_str()))
        .collect();
    assert_eq!(
        tasks,
        vec![
            (7, ' ', false, "open task"),
            (8, 'x', true, "done task ^done-1"),
            (9, '/', false, "nested in progress")
        ]
    );
    let ids: Vec<(&str, usize)> = note
        .block_ids
        .iter()
        .map(|b| (b.id.as_str(), b.line))
        .collect();
    assert_eq!(ids, vec![("done-1", 8), ("para", 11)]);
}

#[test]
fn broken_yaml_warns_and_the_body_is_still_parsed() {
    let note = parse("---\ntitle: [unclosed\n---\n# Body\n#tag\n");
    assert_eq!(note.warnings.len(), 1);
    assert!(
        note.warnings[0].message.contains("broken YAML"),
        "{:?}",
        note.warnings
    );
    assert!(note.properties.is_empty());
    assert_eq!(note.title, "Body");
    assert_eq!(tag_names(&note), vec!["tag"]);
    assert_eq!(note.headings[0].line, 4);
}

#[test]
fn unterminated_code_fence_is_a_warning_and_swallows_the_rest() {
    let note = parse("# A\n```rust\nfn x() {}\n# not a heading\n");
    assert_eq!(note.headings.len(), 1);
    assert_eq!(note.warnings.len(), 1);
    assert!(
        note.warnings[0]
            .message
            .contains("unterminated code fence opened at line 2")
    );
}

#[test]
fn properties_are_json_and_daily_dates_are_found() {
    let daily = DailyNotes::new("Journal", "YYYY-MM-DD");
    let text = "---\ntype: daily\nrating: 4\naliases: Today\n---\nbody\n";
    let note = parse_note(
        "Journal/2026-11-24.md",
        text,
        &ParseOptions { daily_notes: daily },
    );
    assert_eq!(note.properties["type"], "daily");
    assert_eq!(note.properties["rating"], 4);
    assert_eq!(note.aliases, vec!["Today"]);
    assert_eq!(
        note.daily_date.map(|d| d.to_string()).as_deref(),
        Some("2026-11-24")
    );
    assert_eq!(parse("x").daily_date, None);
}

#[test]
fn crlf_bom_and_odd_input_keep_exact_lines() {
    let note = parse("\u{feff}# T\r\n\r\ntext #t\r\n## H\r\n");
    assert_eq!(
        note.headings.iter().map(|h| h.line).collect::<Vec<_>>(),
        vec![1, 4]
    );
    assert_eq!(note.tags[0].line, 3);
    assert_eq!(note.lines(3, 3), Some("text #t"));
    // Never panics on odd input.
    for text in [
        "",
        "\0\0",
        "---",
        "---\n",
        "%%",
        "[[",
        "![[|]]",
        "# \n#",
        "> [!",
        "- [",
        "\r\r\r",
        "|a|\n|-|\n",
    ] {
        let n = parse(text);
        assert!(n.line_count >= 1);
    }
}

#[test]
fn word_count_skips_frontmatter_and_comments_and_counts_cjk_characters() {
    let note = parse("---\ntitle: many words here\n---\nOne two three %%hidden words%% 中文字\n");
    assert_eq!(note.word_count, 6);
}

#[test]
fn wikilinks_in_properties_are_links() {
    let note = parse(
        "---\ncategories:\n  - \"[[Albums]]\"\nartist: \"[[Paul Chambers|PC]]\"\n---\nBody [[Jazz]]\n",
    );
    let got: Vec<(&str, Option<&str>, usize, bool)> = note
        .links
        .iter()
        .map(|l| {
            (
                l.target.as_str(),
                l.display.as_deref(),
                l.line,
                l.in_frontmatter,
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("Albums", None, 3, true),
            ("Paul Chambers", Some("PC"), 4, true),
            ("Jazz", None, 6, false)
        ]
    );
}

#[test]
fn a_daily_note_full_of_links_is_no_map_of_content() {
    use quire_vault::links::{LinkGraph, LinkResolver};
    let opts = quire_vault::ParseOptions::default();
    let mut notes: Vec<quire_vault::Note> = (1..=5)
        .map(|i| quire_vault::parse_note(&format!("N{i}.md"), "# N\n", &opts))
        .collect();
    let links = "- [[N1]]\n- [[N2]]\n- [[N3]]\n- [[N4]]\n- [[N5]]\n";
    notes.push(quire_vault::parse_note("2026-11-24.md", links, &opts));
    notes.push(quire_vault::parse_note("Index.md", links, &opts));
    assert!(notes[5].daily_date.is_some());
    let resolver = LinkResolver::new(&notes, &[]);
    let graph = LinkGraph::build(&notes, &resolver);
    assert!(!graph.is_moc[5], "the daily note is not a map of content");
    assert!(graph.is_moc[6], "the same links in an ordinary note are");
    assert_eq!(graph.moc_parents[0], [6]);
}

#[test]
fn wikilinks_with_spaces_or_several_pipes() {
    // Obsidian trims target and alias, and splits at the first `|` only: the rest is the alias,
    // or an embed's size and attributes.
    let text = "![[img.jpg | 64]] and [[Note | alias]]\n\
                ![[a.png| center | 400]]\n\
                # ![[p.jpg | rounded-full | 64x64]] `code`\n\
                > ![[e.png|right-medium | 464]]\n\
                - [ ] [[#heading#sub||alias]]\n\
                | a | [[x\\|y]] |\n|---|---|\n| b | [[z]] |\n";
    let note = parse(text);
    assert_eq!(
        link_rows(&note),
        vec![
            (LinkKind::Embed, "img.jpg", None, Some("64"), 1),
            (LinkKind::Wiki, "Note", None, Some("alias"), 1),
            (LinkKind::Embed, "a.png", None, Some("center | 400"), 2),
            (
                LinkKind::Embed,
                "p.jpg",
                None,
                Some("rounded-full | 64x64"),
                3
            ),
            (
                LinkKind::Embed,
                "e.png",
                None,
                Some("right-medium | 464"),
                4
            ),
            (LinkKind::Wiki, "", Some("heading#sub"), Some("|alias"), 5),
            (LinkKind::Wiki, "x", None, Some("y"), 6),
            (LinkKind::Wiki, "z", None, None, 8),
        ]
    );
}

#[test]
fn a_tag_starts_a_line_or_follows_white_space() {
    // Obsidian's pattern is `(^|\s)#…`: `[`, `(`, `,`, `;`, a letter or markup before the `#`
    // make it text, and so does being inside a `[[…]]`.
    let text = "**#bold** and **#strong**, <span>#html</span>\n\
                (#paren) [#bracket ,#comma ;#semi a**b**#glued [x](y)#after `c`#code\n\
                - [ ] #task with \\[\\[#Escaped Links\\]\\] and [[#heading#sub||alias]]\n\
                #hard\\\n#break\n\
                | #in_cell | x |\n|---|---|\n";
    let note = parse(text);
    assert_eq!(
        tag_names(&note),
        vec!["bold", "strong", "html", "task", "hard", "break", "in_cell"]
    );
}
