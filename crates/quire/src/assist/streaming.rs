//! What the generation commands share: Ctrl-C cancels the request in flight, and the text a
//! model writes streams to stdout as it arrives.

use std::io::Write;
use std::sync::{Arc, Mutex};

use anyhow::Result;
use quire_app::types::AssistError;
use quire_app::types::CancelToken;

use super::EXIT_CANCELLED;
use crate::Cli;

/// Ctrl-C cancels the request in flight (its partial answer stays on screen and quire exits
/// with 130); between requests it ends quire at once, as usual.
struct Interrupt {
    current: Arc<Mutex<Option<CancelToken>>>,
}

impl Interrupt {
    fn install() -> Interrupt {
        let current: Arc<Mutex<Option<CancelToken>>> = Arc::new(Mutex::new(None));
        let handler = Arc::clone(&current);
        let installed = ctrlc::set_handler(move || {
            let token = handler.lock().ok().and_then(|t| t.clone());
            match token {
                Some(token) => token.cancel(),
                None => std::process::exit(i32::from(EXIT_CANCELLED)),
            }
        });
        if let Err(e) = installed {
            eprintln!("quire: Ctrl-C will end quire without showing the partial answer: {e}");
        }
        Interrupt { current }
    }

    /// A fresh token for one request: the next Ctrl-C cancels it.
    fn arm(&self) -> CancelToken {
        let token = CancelToken::new();
        if let Ok(mut current) = self.current.lock() {
            *current = Some(token.clone());
        }
        token
    }

    fn disarm(&self) {
        if let Ok(mut current) = self.current.lock() {
            *current = None;
        }
    }
}

/// Writes to stdout as text arrives. When stdout closes (`quire ask … | head`), the request is
/// cancelled instead of finishing for nobody.
pub(super) struct Printer {
    enabled: bool,
    cancel: Option<CancelToken>,
    ends_with_newline: bool,
}

impl Printer {
    pub(super) fn new(enabled: bool) -> Printer {
        Printer {
            enabled,
            cancel: None,
            ends_with_newline: true,
        }
    }

    pub(super) fn text(&mut self, text: &str) {
        if !self.enabled || text.is_empty() {
            return;
        }
        let mut stdout = std::io::stdout().lock();
        if stdout
            .write_all(text.as_bytes())
            .and_then(|_| stdout.flush())
            .is_err()
        {
            self.enabled = false;
            if let Some(token) = &self.cancel {
                token.cancel();
            }
        }
        self.ends_with_newline = text.ends_with('\n');
    }

    /// Ends the streamed text on its own line.
    pub(super) fn end_line(&mut self) {
        if !self.ends_with_newline {
            self.text("\n");
        }
    }
}

/// The model requests of one command: Ctrl-C cancels the one in flight, and the text it shows
/// streams to stdout (except with `--json`).
pub(super) struct Streaming {
    interrupt: Interrupt,
    pub(super) printer: Printer,
}

impl Streaming {
    pub(super) fn new(cli: &Cli) -> Streaming {
        Streaming {
            interrupt: Interrupt::install(),
            printer: Printer::new(!cli.json),
        }
    }

    /// Runs `call` with a fresh cancel token and stdout as its text sink. `Ok(None)` when
    /// Ctrl-C cancelled it: the partial text stays on screen and stderr says so.
    pub(super) fn run<T>(
        &mut self,
        call: impl FnOnce(&CancelToken, &mut dyn FnMut(&str)) -> Result<T, AssistError>,
    ) -> Result<Option<T>> {
        let token = self.interrupt.arm();
        self.printer.cancel = Some(token.clone());
        let printer = &mut self.printer;
        let result = call(&token, &mut |text| printer.text(text));
        self.interrupt.disarm();
        match result {
            Ok(value) => Ok(Some(value)),
            Err(e) if e.is_cancelled() => {
                self.printer.end_line();
                eprintln!("quire: cancelled");
                Ok(None)
            }
            Err(e) => Err(e.into()),
        }
    }

    pub(super) fn text(&mut self, text: &str) {
        self.printer.text(text);
    }
}
