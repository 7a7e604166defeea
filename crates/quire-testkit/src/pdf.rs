//! PDFs written from known text, for the attachment tests: [`pdf_from_pages`] (one string per
//! page, a line of the PDF per line of the string, in Helvetica), and [`encrypted_pdf`].

use lopdf::content::{Content, Operation};
use lopdf::{Dictionary, Document, Object, Stream, dictionary};

/// A PDF whose page `i` shows the lines of `pages[i]` (ASCII), top to bottom; streams compressed.
pub fn pdf_from_pages(pages: &[&str]) -> Vec<u8> {
    let doc = document(pages);
    save(doc)
}

/// [`pdf_from_pages`] encrypted (RC4, 128 bits) with the user password `secret`.
pub fn encrypted_pdf(pages: &[&str]) -> Vec<u8> {
    let mut doc = document(pages);
    let id = Object::string_literal(b"quire-test-file!".to_vec());
    doc.trailer.set("ID", vec![id.clone(), id]);
    let version = lopdf::EncryptionVersion::V2 {
        document: &doc,
        owner_password: "owner",
        user_password: "secret",
        key_length: 128,
        permissions: lopdf::Permissions::all(),
    };
    let state = lopdf::EncryptionState::try_from(version).expect("an encryption state");
    doc.encrypt(&state).expect("encrypted");
    save(doc)
}

/// A one-page PDF with two columns of lines side by side, drawn a column at a time (as most
/// two-column papers are), or line by line across both columns when `across` is set.
pub fn two_column_pdf(left: &[&str], right: &[&str], across: bool) -> Vec<u8> {
    let mut doc = document(&[""]);
    let mut operations = vec![
        Operation::new("BT", vec![]),
        Operation::new("Tf", vec!["F1".into(), 10.into()]),
    ];
    let mut show = |x: i64, row: usize, text: &str| {
        let y = 780 - 14 * row as i64;
        operations.push(Operation::new(
            "Tm",
            vec![1.into(), 0.into(), 0.into(), 1.into(), x.into(), y.into()],
        ));
        operations.push(Operation::new("Tj", vec![Object::string_literal(text)]));
    };
    if across {
        for row in 0..left.len().max(right.len()) {
            if let Some(l) = left.get(row) {
                show(50, row, l);
            }
            if let Some(r) = right.get(row) {
                show(310, row, r);
            }
        }
    } else {
        for (row, l) in left.iter().enumerate() {
            show(50, row, l);
        }
        for (row, r) in right.iter().enumerate() {
            show(310, row, r);
        }
    }
    operations.push(Operation::new("ET", vec![]));
    let content = Content { operations }.encode().expect("content encodes");
    let content_id = doc.add_object(Stream::new(Dictionary::new(), content));
    let page_id = *doc.get_pages().values().next().expect("a page");
    doc.get_object_mut(page_id)
        .and_then(Object::as_dict_mut)
        .expect("the page")
        .set("Contents", content_id);
    save(doc)
}

fn document(pages: &[&str]) -> Document {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font_id = doc.add_object(dictionary! {
        "Type" => "Font",
        "Subtype" => "Type1",
        "BaseFont" => "Helvetica",
        "Encoding" => "WinAnsiEncoding",
    });
    let resources_id = doc.add_object(dictionary! {
        "Font" => dictionary! { "F1" => font_id },
    });
    let mut kids = Vec::new();
    for text in pages {
        let mut operations = vec![
            Operation::new("BT", vec![]),
            Operation::new("Tf", vec!["F1".into(), 11.into()]),
            Operation::new("TL", vec![14.into()]),
            Operation::new("Td", vec![60.into(), 780.into()]),
        ];
        for line in text.lines() {
            operations.push(Operation::new("Tj", vec![Object::string_literal(line)]));
            operations.push(Operation::new("T*", vec![]));
        }
        operations.push(Operation::new("ET", vec![]));
        let content = Content { operations }.encode().expect("content encodes");
        let content_id = doc.add_object(Stream::new(Dictionary::new(), content));
        let page_id = doc.add_object(dictionary! {
            "Type" => "Page",
            "Parent" => pages_id,
            "Contents" => content_id,
        });
        kids.push(Object::Reference(page_id));
    }
    let count = kids.len() as i64;
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages",
            "Kids" => kids,
            "Count" => count,
            "Resources" => resources_id,
            "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
        }),
    );
    let catalog_id = doc.add_object(dictionary! {
        "Type" => "Catalog",
        "Pages" => pages_id,
    });
    doc.trailer.set("Root", catalog_id);
    doc.compress();
    doc
}

fn save(mut doc: Document) -> Vec<u8> {
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).expect("written to memory");
    bytes
}

/// A one-page PDF whose page draws a form XObject that draws itself (`/X0 Do` inside `X0`,
/// named in its own resources): a naive extractor recurses until its stack overflows.
pub fn self_drawing_form_pdf() -> Vec<u8> {
    let mut doc = document(&["Before the form"]);
    let form_id = doc.new_object_id();
    let form = Stream::new(
        dictionary! {
            "Type" => "XObject",
            "Subtype" => "Form",
            "BBox" => vec![0.into(), 0.into(), 100.into(), 100.into()],
            "Resources" => dictionary! { "XObject" => dictionary! { "X0" => form_id } },
        },
        b"/X0 Do".to_vec(),
    );
    doc.objects.insert(form_id, Object::Stream(form));
    let page_id = *doc.get_pages().values().next().expect("a page");
    let content_id = doc.add_object(Stream::new(Dictionary::new(), b"/X0 Do".to_vec()));
    let page = doc
        .get_object_mut(page_id)
        .and_then(Object::as_dict_mut)
        .expect("the page");
    page.set(
        "Resources",
        dictionary! { "XObject" => dictionary! { "X0" => form_id } },
    );
    page.set("Contents", content_id);
    save(doc)
}

/// zlib of `len` spaces, written a MiB at a time (never holding them all).
fn zlib_of_spaces(len: usize) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    let block = vec![b' '; 1024 * 1024];
    let mut left = len;
    while left > 0 {
        let n = left.min(block.len());
        encoder.write_all(&block[..n]).expect("in memory");
        left -= n;
    }
    encoder.finish().expect("in memory")
}

/// A page whose content is the stream `content` (with `filter`), text first so the page has
/// some, then `padding` decoded bytes of spaces.
fn one_page_with(content: Stream) -> Document {
    let mut doc = document(&["hostile page"]);
    let content_id = doc.add_object(content);
    let page_id = *doc.get_pages().values().next().expect("a page");
    doc.get_object_mut(page_id)
        .and_then(Object::as_dict_mut)
        .expect("the page")
        .set("Contents", content_id);
    doc
}

/// A one-page PDF whose content stream is compressed twice (`/Filter [/FlateDecode
/// /FlateDecode]`) and decodes to `decoded` bytes of spaces: a few KB on disk, counted once by a
/// budget that inflates only the outer layer.
pub fn double_flate_pdf(decoded: usize) -> Vec<u8> {
    let inner = zlib_of_spaces(decoded);
    let mut outer = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    std::io::Write::write_all(&mut outer, &inner).expect("in memory");
    let twice = outer.finish().expect("in memory");
    let mut stream = Stream::new(
        dictionary! { "Filter" => vec![Object::Name(b"FlateDecode".to_vec()), Object::Name(b"FlateDecode".to_vec())] },
        twice,
    );
    stream.allows_compression = false;
    save(one_page_with(stream))
}

/// A one-page PDF whose `/Contents` names one compressed stream of `stream_bytes` spaces
/// `times` times: the stream is stored once and decoded once per reference.
pub fn repeated_contents_pdf(times: usize, stream_bytes: usize) -> Vec<u8> {
    let mut stream = Stream::new(
        dictionary! { "Filter" => "FlateDecode" },
        zlib_of_spaces(stream_bytes),
    );
    stream.allows_compression = false;
    let mut doc = document(&["hostile page"]);
    let content_id = doc.add_object(stream);
    let page_id = *doc.get_pages().values().next().expect("a page");
    let contents: Vec<Object> = (0..times).map(|_| Object::Reference(content_id)).collect();
    doc.get_object_mut(page_id)
        .and_then(Object::as_dict_mut)
        .expect("the page")
        .set("Contents", contents);
    save(doc)
}

/// `pages` pages sharing one content stream of `operators` `q Q` pairs and a line of text:
/// small on disk, slow to interpret page after page.
pub fn slow_pdf(pages: usize, operators: usize) -> Vec<u8> {
    let mut content = b"BT /F1 11 Tf 60 780 Td (slow page) Tj ET\n".to_vec();
    content.extend(b"q Q\n".repeat(operators));
    let mut doc = document(&vec![""; pages]);
    let content_id = doc.add_object(Stream::new(Dictionary::new(), content));
    doc.compress();
    let page_ids: Vec<_> = doc.get_pages().values().copied().collect();
    for page_id in page_ids {
        doc.get_object_mut(page_id)
            .and_then(Object::as_dict_mut)
            .expect("a page")
            .set("Contents", content_id);
    }
    save(doc)
}
