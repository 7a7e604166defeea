//! A parser for `text/event-stream` bodies (server-sent events), fed one line at a time.
//!
//! It follows the WHATWG HTML spec, "Interpreting an event stream": a blank line dispatches the
//! event, lines starting with `:` are comments (servers send them as keep-alives), `data` lines
//! are joined with `\n`, one space after the colon is dropped, and an event with no `data` is no
//! event. `id` and `retry` are ignored: a chat reply is never resumed. Pure: no I/O.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event` field, when the server named the event type.
    pub event: Option<String>,
    pub data: String,
}

/// Collects the fields of the event being received.
#[derive(Debug, Default)]
pub struct SseParser {
    event: Option<String>,
    data: String,
    has_data: bool,
    started: bool,
}

impl SseParser {
    pub fn new() -> SseParser {
        SseParser::default()
    }

    /// Takes one line of the body without its `\n` (a trailing `\r` is allowed). Returns the
    /// events it completes: at most one, except when lone `\r` line endings pack several lines
    /// into one.
    pub fn line(&mut self, raw: &str) -> Vec<SseEvent> {
        let mut raw = raw.strip_suffix('\r').unwrap_or(raw);
        if !self.started {
            self.started = true;
            raw = raw.strip_prefix('\u{feff}').unwrap_or(raw);
        }
        // The spec also allows a lone CR as a line ending; no chat server sends it, but it costs
        // one split to honour.
        raw.split('\r')
            .filter_map(|line| self.field(line))
            .collect()
    }

    /// The end of the body. The spec drops an event that no blank line closed; we dispatch it,
    /// because some servers end with `data: [DONE]` and close without the blank line.
    pub fn finish(&mut self) -> Option<SseEvent> {
        self.dispatch()
    }

    fn field(&mut self, line: &str) -> Option<SseEvent> {
        if line.is_empty() {
            return self.dispatch();
        }
        if line.starts_with(':') {
            return None;
        }
        let (name, value) = match line.split_once(':') {
            Some((name, value)) => (name, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match name {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = Some(value.to_string()),
            _ => {}
        }
        None
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = self.event.take();
        if !self.has_data {
            return None;
        }
        self.has_data = false;
        Some(SseEvent {
            event,
            data: std::mem::take(&mut self.data),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(body: &str) -> Vec<SseEvent> {
        let mut parser = SseParser::new();
        let mut events: Vec<SseEvent> = body.split('\n').flat_map(|l| parser.line(l)).collect();
        events.extend(parser.finish());
        events
    }

    /// The data of each event in `body`.
    fn data_of(body: &str) -> Vec<String> {
        parse(body).into_iter().map(|e| e.data).collect()
    }

    #[test]
    fn blank_lines_dispatch_and_comments_are_skipped() {
        let body = ": keep-alive\n\ndata: {\"a\":1}\n\n: ping\ndata: [DONE]\n\n";
        assert_eq!(data_of(body), [r#"{"a":1}"#, "[DONE]"]);
    }

    #[test]
    fn data_lines_of_one_event_are_joined_with_newlines() {
        // Only the first space after the colon belongs to the syntax.
        assert_eq!(data_of("data: {\"a\":\ndata:  1}\n\n"), ["{\"a\":\n 1}"]);
    }

    #[test]
    fn crlf_lone_cr_and_a_bom_are_line_syntax() {
        let body = "\u{feff}data: one\r\n\r\ndata: two\r\rdata: three\n";
        assert_eq!(data_of(body), ["one", "two", "three"]);
    }

    #[test]
    fn event_names_are_kept_and_events_without_data_vanish() {
        let events = parse("event: ping\n\nevent: error\ndata: {}\n\nid: 7\n\ndata: x\n\n");
        let names: Vec<Option<&str>> = events.iter().map(|e| e.event.as_deref()).collect();
        assert_eq!(names, [Some("error"), None]);
    }

    #[test]
    fn an_empty_data_field_is_still_an_event() {
        assert_eq!(data_of("data\n\n"), [""]);
    }

    #[test]
    fn an_unterminated_last_event_is_dispatched_at_the_end() {
        assert_eq!(data_of("data: [DONE]"), ["[DONE]"]);
    }
}
