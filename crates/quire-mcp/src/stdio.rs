//! The stdio transport's front door. MCP over stdio is JSON-RPC, one message per line. rmcp's
//! line transport drops a line that is not JSON without a word, and holds a line of up to
//! 16 MiB before it looks at it. This filter sits between the real stdin/stdout and rmcp:
//!
//! - a line longer than [`MAX_BODY_BYTES`] is skipped to its end without being held (only its
//!   first bytes are kept, to find its id) and answered with JSON-RPC's invalid-request error
//!   (-32600), so a client waiting for that id hears back;
//! - a line that is not JSON is answered with the parse error (-32700, `id: null`), as JSON-RPC
//!   2.0 (section 5.1) asks;
//! - every other line goes on to rmcp through an in-memory pipe (rmcp answers well-formed JSON
//!   that is no JSON-RPC message with -32600 itself).
//!
//! rmcp's replies and the filter's own come out through one writer task, a whole line at a time,
//! so they never interleave inside a line on stdout.

use serde_json::{Value as Json, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use quire_app::limits::MAX_BODY_BYTES;

/// JSON-RPC's "Invalid JSON was received by the server."
pub(crate) const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's "The JSON sent is not a valid Request object."
pub(crate) const INVALID_REQUEST: i64 = -32600;

/// Lines (replies) waiting for the writer.
const REPLIES_QUEUED: usize = 64;

/// One line from the client.
#[derive(Debug, PartialEq, Eq)]
enum Line {
    /// A line of at most the limit, its line break removed.
    Whole(Vec<u8>),
    /// A line over the limit: its first `limit` bytes and its length.
    TooLong { prefix: Vec<u8>, len: usize },
    /// The client closed stdin.
    End,
}

/// Reads lines of at most `max` bytes; longer ones are consumed to their end while holding no
/// more than `max` bytes of them.
struct LineReader<R> {
    reader: BufReader<R>,
    max: usize,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    fn new(input: R, max: usize) -> Self {
        LineReader {
            reader: BufReader::with_capacity(64 * 1024, input),
            max,
        }
    }

    async fn next(&mut self) -> std::io::Result<Line> {
        let mut line = Vec::new();
        let mut len = 0;
        loop {
            let available = self.reader.fill_buf().await?;
            if available.is_empty() {
                // A last line without a line break still counts.
                return Ok(match len {
                    0 => Line::End,
                    _ if len > self.max => Line::TooLong { prefix: line, len },
                    _ => Line::Whole(line),
                });
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let content = &available[..newline.unwrap_or(available.len())];
            let room = self.max.saturating_sub(line.len());
            line.extend_from_slice(&content[..room.min(content.len())]);
            len += content.len();
            let consumed = newline.map_or(available.len(), |i| i + 1);
            self.reader.consume(consumed);
            if newline.is_some() {
                if line.last() == Some(&b'\r') && len <= self.max {
                    line.pop();
                }
                return Ok(if len > self.max {
                    Line::TooLong { prefix: line, len }
                } else {
                    Line::Whole(line)
                });
            }
        }
    }
}

/// A JSON-RPC error response, as one line.
fn error_line(id: Json, code: i64, message: String) -> Vec<u8> {
    let mut line = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
        .to_string()
        .into_bytes();
    line.push(b'\n');
    line
}

/// The end of the JSON string that starts at `at` (the index after its closing quote), if it
/// ends within `bytes`.
fn string_end(bytes: &[u8], at: usize) -> Option<usize> {
    let mut i = at + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

fn skip_space(bytes: &[u8], mut i: usize) -> usize {
    while bytes.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// The `id` of the request that starts with `prefix` (cut off anywhere), when it can be read
/// there: a string or a number that is the value of the top-level key `"id"`. Else null, as
/// JSON-RPC prescribes when the id cannot be determined.
fn request_id(prefix: &[u8]) -> Json {
    let mut depth = 0usize;
    let mut i = 0;
    while i < prefix.len() {
        match prefix[i] {
            b'"' => {
                let Some(end) = string_end(prefix, i) else {
                    break;
                };
                let colon = skip_space(prefix, end);
                if depth == 1 && &prefix[i..end] == b"\"id\"" && prefix.get(colon) == Some(&b':') {
                    return id_value(prefix, skip_space(prefix, colon + 1)).unwrap_or(Json::Null);
                }
                i = end;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    Json::Null
}

/// The string or number at `at`, when it is whole within `bytes`.
fn id_value(bytes: &[u8], at: usize) -> Option<Json> {
    let end = match bytes.get(at)? {
        b'"' => string_end(bytes, at)?,
        b'-' | b'0'..=b'9' => {
            let len = bytes[at..]
                .iter()
                .position(|b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))?;
            at + len
        }
        _ => return None,
    };
    serde_json::from_slice::<Json>(&bytes[at..end])
        .ok()
        .filter(|id| id.is_string() || id.is_number())
}

/// Reads the client's lines from `input`: JSON goes on to `to_server`, the rest is answered on
/// `replies`. Closes `to_server` when `input` ends, which ends rmcp's service.
async fn filter_requests(
    input: impl AsyncRead + Unpin,
    mut to_server: impl AsyncWrite + Unpin,
    replies: mpsc::Sender<Vec<u8>>,
    max: usize,
) {
    let mut lines = LineReader::new(input, max);
    loop {
        let reply = match lines.next().await {
            Ok(Line::End) | Err(_) => break,
            Ok(Line::TooLong { prefix, len }) => error_line(
                request_id(&prefix),
                INVALID_REQUEST,
                format!(
                    "Invalid Request: the message is {len} bytes long; the limit is {max} bytes"
                ),
            ),
            Ok(Line::Whole(line)) => {
                let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&line);
                if line.trim_ascii().is_empty() {
                    continue;
                }
                match serde_json::from_slice::<serde::de::IgnoredAny>(line) {
                    Ok(_) => {
                        let forwarded = async {
                            to_server.write_all(line).await?;
                            to_server.write_all(b"\n").await?;
                            to_server.flush().await
                        };
                        if forwarded.await.is_err() {
                            break;
                        }
                        continue;
                    }
                    // serde's message gives a position, never the text.
                    Err(e) => error_line(
                        Json::Null,
                        PARSE_ERROR,
                        format!("Parse error: the message is not valid JSON ({e})"),
                    ),
                }
            }
        };
        if replies.send(reply).await.is_err() {
            break;
        }
    }
    let _ = to_server.shutdown().await;
}

/// Passes rmcp's output on to the writer, a whole line at a time.
async fn forward_replies(from_server: impl AsyncRead + Unpin, replies: mpsc::Sender<Vec<u8>>) {
    let mut reader = BufReader::new(from_server);
    loop {
        let mut line = Vec::new();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                if !line.ends_with(b"\n") {
                    line.push(b'\n');
                }
                if replies.send(line).await.is_err() {
                    break;
                }
            }
        }
    }
}

/// The one writer of stdout.
async fn write_replies(mut replies: mpsc::Receiver<Vec<u8>>, mut output: impl AsyncWrite + Unpin) {
    while let Some(line) = replies.recv().await {
        if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
            break;
        }
    }
}

/// Starts the filter between `input`/`output` (stdin/stdout) and the returned pipe, which is
/// what rmcp serves. The handle ends once every reply has been written (after the pipe and
/// `input` are closed).
pub(crate) fn filtered(
    input: impl AsyncRead + Unpin + Send + 'static,
    output: impl AsyncWrite + Unpin + Send + 'static,
) -> (DuplexStream, JoinHandle<()>) {
    let (ours, server_side) = tokio::io::duplex(2 * MAX_BODY_BYTES);
    let (from_server, to_server) = tokio::io::split(ours);
    let (replies, queue) = mpsc::channel(REPLIES_QUEUED);
    let writer = tokio::spawn(write_replies(queue, output));
    tokio::spawn(forward_replies(from_server, replies.clone()));
    tokio::spawn(filter_requests(input, to_server, replies, MAX_BODY_BYTES));
    (server_side, writer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    async fn lines_of(input: &[u8], max: usize) -> Vec<Line> {
        let mut reader = LineReader::new(input, max);
        let mut lines = Vec::new();
        loop {
            match reader.next().await.unwrap() {
                Line::End => return lines,
                line => lines.push(line),
            }
        }
    }

    #[tokio::test]
    async fn long_lines_are_cut_to_their_prefix_and_the_next_line_is_whole() {
        let input = [b"abc\r\n".as_slice(), &[b'x'; 100], b"\nlast"].concat();
        assert_eq!(
            lines_of(&input, 10).await,
            [
                Line::Whole(b"abc".to_vec()),
                Line::TooLong {
                    prefix: vec![b'x'; 10],
                    len: 100
                },
                Line::Whole(b"last".to_vec()),
            ]
        );
    }

    #[test]
    fn the_id_is_read_from_the_start_of_a_message_when_it_is_there() {
        let id = |text: &str| request_id(text.as_bytes());
        assert_eq!(
            id(r#"{"jsonrpc":"2.0","id":7,"method":"x","params":{"q":"#),
            7
        );
        assert_eq!(id(r#"{ "id" : "a\"b", "#), "a\"b");
        assert_eq!(id(r#"{"params":{"id":3},"method":"id","#), Json::Null);
        assert_eq!(id(r#"{"method":"x","params":["id", {"#), Json::Null);
        // A number cut by the end of the prefix could be another number.
        assert_eq!(id(r#"{"id":12"#), Json::Null);
        assert_eq!(id(r#"{"id":null,"#), Json::Null);
        assert_eq!(id("not json"), Json::Null);
    }

    #[tokio::test]
    async fn json_goes_on_and_everything_else_is_answered() {
        let input = [
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n".as_slice(),
            b"not json\n",
            b"\n",
            b"{\"id\":5,\"pad\":\"",
            &[b'y'; 200],
            b"\"}\n",
            b"[1,2]\n",
        ]
        .concat();
        let (to_server, mut server_reads) = tokio::io::duplex(4096);
        let (replies, mut queue) = mpsc::channel(8);
        filter_requests(input.as_slice(), to_server, replies, 100).await;
        let mut forwarded = String::new();
        server_reads.read_to_string(&mut forwarded).await.unwrap();
        assert_eq!(
            forwarded,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n[1,2]\n"
        );
        let parse: Json = serde_json::from_slice(&queue.recv().await.unwrap()).unwrap();
        assert_eq!(parse["id"], Json::Null);
        assert_eq!(parse["error"]["code"], PARSE_ERROR);
        assert!(
            parse["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with("Parse error")
        );
        let long: Json = serde_json::from_slice(&queue.recv().await.unwrap()).unwrap();
        assert_eq!(long["id"], 5);
        assert_eq!(long["error"]["code"], INVALID_REQUEST);
        assert_eq!(
            long["error"]["message"],
            "Invalid Request: the message is 217 bytes long; the limit is 100 bytes"
        );
        assert!(queue.recv().await.is_none());
    }
}
