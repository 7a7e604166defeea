//! The OpenAI-compatible embedder against a fake server on 127.0.0.1 that records requests and
//! scripts its replies (a 429 first, answers out of order).

#![allow(clippy::unwrap_used)] // tests and benches stop at the first surprise

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use quire_embed::{Embedder, RemoteConfig, RemoteEmbedder};
use serde_json::{Value, json};

/// Each request's path, Authorization header and JSON body.
type RequestLog = Arc<Mutex<Vec<(String, String, Value)>>>;

/// Serves `replies` in order (status, extra header, body builder from the request JSON), recording
/// each request's path, Authorization header and JSON body.
fn fake_server(replies: Vec<(u16, &'static str)>) -> (String, RequestLog) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let log = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&log);
    std::thread::spawn(move || {
        for (status, header) in replies {
            let Ok((mut stream, _)) = listener.accept() else {
                return;
            };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let path = line
                .split_whitespace()
                .nth(1)
                .unwrap_or_default()
                .to_string();
            let (mut length, mut auth) = (0usize, String::new());
            loop {
                let mut h = String::new();
                reader.read_line(&mut h).unwrap();
                let h = h.trim_end();
                if h.is_empty() {
                    break;
                }
                let lower = h.to_lowercase();
                if let Some(v) = lower.strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                }
                if lower.starts_with("authorization:") {
                    auth = h["authorization:".len()..].trim().to_string();
                }
            }
            let mut body = vec![0u8; length];
            reader.read_exact(&mut body).unwrap();
            let request: Value = serde_json::from_slice(&body).unwrap();
            // 201 scripts a 200 whose vectors are one value short.
            let short = status == 201;
            let status = if short { 200 } else { status };
            let reply = if status == 200 {
                // One vector per input: [len, 1, 0, ...], listed in reverse order.
                let inputs = request["input"].as_array().unwrap().clone();
                let data: Vec<Value> = inputs
                    .iter()
                    .enumerate()
                    .rev()
                    .map(|(i, t)| {
                        let mut v = vec![t.as_str().unwrap().len() as f32, 1.0, 0.0, 0.0];
                        v.truncate(if short { 3 } else { 4 });
                        json!({"index": i, "embedding": v})
                    })
                    .collect();
                json!({"data": data, "model": request["model"]}).to_string()
            } else {
                json!({"error": {"message": "slow down"}}).to_string()
            };
            seen.lock().unwrap().push((path, auth, request));
            let reason = if status == 200 {
                "OK"
            } else {
                "Too Many Requests"
            };
            let response = format!(
                "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n{header}\r\n{reply}",
                reply.len()
            );
            stream.write_all(response.as_bytes()).unwrap();
        }
    });
    (url, log)
}

#[test]
#[allow(unsafe_code)] // std::env::set_var: this test alone uses the variable
fn batches_retries_on_429_and_restores_input_order() {
    let (url, log) = fake_server(vec![
        (200, ""),
        (429, "Retry-After: 0\r\n"),
        (200, ""),
        (200, ""),
    ]);
    let key_env = "QUIRE_EMBED_TEST_REMOTE_KEY";
    // SAFETY: only this test uses this variable; the key is read at each request.
    unsafe { std::env::set_var(key_env, "sk-test") };
    let mut config = RemoteConfig::new(url, "nomic-embed-text");
    config.api_key_env = Some(key_env.into());
    config.batch_size = 2;
    config.passage_prefix = "search_document: ".into();
    let embedder = RemoteEmbedder::connect(config).unwrap();
    assert_eq!(embedder.space().dimension, 4);
    let vectors = embedder.embed_passages(&["a", "bbb", "cc"]).unwrap();
    assert_eq!(vectors.len(), 3);
    // Input order restored (the server answered in reverse) and unit length.
    let lens: Vec<f32> = vectors.iter().map(|v| v[0] / v[1]).collect();
    assert_eq!(lens, vec![18.0, 20.0, 19.0]); // "search_document: " is 17 characters
    for v in &vectors {
        assert!((v.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-5);
    }
    let log = log.lock().unwrap();
    // probe, 429, retried first batch of 2, second batch of 1
    assert_eq!(log.len(), 4);
    assert!(log.iter().all(|(path, auth, body)| path == "/v1/embeddings"
        && auth == "Bearer sk-test"
        && body["model"] == "nomic-embed-text"));
    assert_eq!(
        log[1].2, log[2].2,
        "the 429'd batch is sent again as it was"
    );
    assert_eq!(log[2].2["input"].as_array().unwrap().len(), 2);
    assert_eq!(log[3].2["input"], json!(["search_document: cc"]));
}

#[test]
fn a_persistent_error_is_reported_not_retried_forever() {
    let (url, _log) = fake_server(vec![(429, "Retry-After: 0\r\n"); 3]);
    let mut config = RemoteConfig::new(url, "m");
    config.retry.max_retries = 2;
    let err = RemoteEmbedder::connect(config).err().expect("an error");
    assert!(err.to_string().contains("HTTP 429"), "{err}");
}

#[test]
fn a_vector_of_another_length_is_an_error_not_a_silent_gap() {
    let (url, _log) = fake_server(vec![(200, ""), (201, "")]);
    let embedder = RemoteEmbedder::connect(RemoteConfig::new(url, "m")).unwrap();
    assert_eq!(embedder.space().dimension, 4);
    let err = embedder.embed_passages(&["a"]).unwrap_err();
    assert!(
        err.to_string()
            .contains("a vector of 3 values, where this model's have 4"),
        "{err}"
    );
}
