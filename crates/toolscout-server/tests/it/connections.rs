//! Connections over a real loopback socket: idle, half-sent and stalled ones are closed,
//! and never starve the requests of others (finding 8 of the second security pass: with
//! no header-read timeout and no cap, 1,100 idle sockets under a 1,024-descriptor limit
//! made new requests time out).

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use toolscout_server::{ConnectionLimits, ServerOptions};

use crate::fixture_with;

/// Serves a fixture with `limits` on a free loopback port; returns its address.
async fn serve(limits: ConnectionLimits) -> (crate::Fixture, std::net::SocketAddr) {
    let f = fixture_with(
        ServerOptions::default().with_connection_limits(limits),
        true,
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(toolscout_server::serve_on(listener, f.state.clone()));
    (f, addr)
}

/// Reads until the peer closes the connection; returns what was read.
async fn read_to_close(stream: &mut TcpStream) -> String {
    let mut buf = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut buf)).await;
    assert!(
        read.is_ok(),
        "the server kept the connection open; read: {:?}",
        String::from_utf8_lossy(&buf)
    );
    String::from_utf8_lossy(&buf).into_owned()
}

/// One `server/identity` call over a new connection.
async fn identity(addr: std::net::SocketAddr) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "server/identity"}).to_string();
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let answer = read_to_close(&mut stream).await;
    let json = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {answer}"))
}

#[tokio::test]
async fn half_sent_heads_bodies_and_idle_connections_are_closed() {
    let limits = ConnectionLimits::default()
        .with_header_read_timeout(Duration::from_secs(1))
        .with_body_read_timeout(Duration::from_secs(1));
    let (_f, addr) = serve(limits).await;
    // Nothing at all.
    let mut silent = TcpStream::connect(addr).await.unwrap();
    // Half a head.
    let mut half_head = TcpStream::connect(addr).await.unwrap();
    half_head
        .write_all(b"GET /api/v1/tools HTTP/1.1\r\nHost: loc")
        .await
        .unwrap();
    // A whole head and half a body.
    let mut half_body = TcpStream::connect(addr).await.unwrap();
    half_body
        .write_all(b"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\":")
        .await
        .unwrap();
    // A request answered, then nothing (kept alive).
    let mut kept = TcpStream::connect(addr).await.unwrap();
    kept.write_all(b"GET /api/v1/tools?limit=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    assert_eq!(read_to_close(&mut silent).await, "");
    // hyper answers a head that timed out with 408 or closes; either way it closes.
    let answer = read_to_close(&mut half_head).await;
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 408"),
        "{answer}"
    );
    let answer = read_to_close(&mut half_body).await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    let answer = read_to_close(&mut kept).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    // The server still answers.
    assert!(identity(addr).await["result"]["tools_count"].is_u64());
}

/// Raises this process's soft limit of open files to what the test needs, where the
/// hard limit allows; returns whether it could.
pub(crate) fn raise_open_files(to: u64) -> bool {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut limit = getrlimit(Resource::Nofile);
    if limit.current.is_some_and(|c| c >= to) || limit.current.is_none() {
        return true;
    }
    if limit.maximum.is_some_and(|m| m < to) {
        return false;
    }
    limit.current = Some(to);
    setrlimit(Resource::Nofile, limit).is_ok()
}

#[tokio::test]
async fn two_thousand_idle_sockets_do_not_starve_requests() {
    assert!(
        raise_open_files(4096),
        "this test holds 2,000 sockets and needs a hard limit of open files of at least 4,096 (ulimit -Hn)"
    );
    // Long timeouts: what frees room here is the cap, not a timer.
    let limits = ConnectionLimits::default()
        .with_max_connections(256)
        .with_header_read_timeout(Duration::from_secs(120))
        .with_body_read_timeout(Duration::from_secs(120));
    let (_f, addr) = serve(limits).await;
    let mut held = Vec::with_capacity(2000);
    for i in 0..2000 {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        match i % 3 {
            0 => {}
            1 => stream.write_all(b"GET / HTTP/1.1\r\nHo").await.unwrap(),
            _ => stream
                .write_all(b"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
                .await
                .unwrap(),
        }
        held.push(stream);
        if i % 200 == 199 {
            // Requests are answered all along.
            assert!(
                identity(addr).await["result"]["tools_count"].is_u64(),
                "after {i} sockets"
            );
        }
    }
    for _ in 0..20 {
        assert!(identity(addr).await["result"]["tools_count"].is_u64());
    }
    // The server closed the idle ones it made room for: at most the cap are open.
    let mut open = 0;
    for stream in &mut held {
        let mut byte = [0u8; 1];
        let read = tokio::time::timeout(Duration::from_millis(1), stream.read(&mut byte)).await;
        if read.is_err() {
            open += 1;
        }
    }
    assert!(
        open <= 256,
        "{open} sockets are still open on the server's side"
    );
}
