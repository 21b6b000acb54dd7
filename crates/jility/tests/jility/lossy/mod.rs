//! A `jility serve` that can be SIGKILLed and restarted, and a TCP proxy in front of it
//! that loses the answer of a write after its commit (killing the server, or answering a
//! gateway's 502 in its place): for the idempotency tests.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr
)]

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use crate::pg::TestDb;

const BIN: &str = env!("CARGO_BIN_EXE_jility");

/// `jility serve` on `db`, restartable: its process and the address it announced.
pub struct Restartable {
    db_url: String,
    child: Option<Child>,
    pub addr: Option<SocketAddr>,
    pub starts: usize,
}

impl Restartable {
    pub fn start(db: &TestDb) -> Self {
        let mut server = Self {
            db_url: db.url.clone(),
            child: None,
            addr: None,
            starts: 0,
        };
        server.restart();
        server
    }

    /// SIGKILL the process (if running) and start a fresh one.
    pub fn restart(&mut self) {
        self.kill();
        let mut child = Command::new(BIN)
            .args([
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--database-url",
                &self.db_url,
            ])
            // The load test's writers are not to be slowed by the rate limit.
            .args(["--rate-limit", "1000000"])
            .env("JILITY_MODE", "cloud")
            .env_remove("DATABASE_URL")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(rest) = line.strip_prefix("jility: serving the API at http://") {
                    let addr = rest.split('/').next().unwrap_or_default().to_string();
                    let _ = tx.send(addr);
                }
                eprintln!("server: {line}");
            }
        });
        let addr = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the server announces its address");
        self.addr = Some(addr.parse().unwrap());
        self.child = Some(child);
        self.starts += 1;
    }

    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill(); // SIGKILL
            let _ = child.wait();
        }
        self.addr = None;
    }
}

impl Drop for Restartable {
    fn drop(&mut self) {
        self.kill();
    }
}

/// What the proxy does to the answer of the next POST.
pub const PASS: u8 = 0;
/// SIGKILL the server and restart it, then drop the client's connection.
pub const KILL: u8 = 1;
/// Answer `502 Bad Gateway` in its place (a gateway that lost the server's answer).
pub const GATEWAY: u8 = 2;
/// [`GATEWAY`], for every POST until disarmed.
pub const GATEWAY_ALWAYS: u8 = 3;

/// A TCP proxy in front of a [`Restartable`] server. When armed, the first bytes of the
/// answer to a POST (the write is committed: the server answers after its commit) are not
/// passed on: [`KILL`] or [`GATEWAY`].
pub struct Proxy {
    pub addr: SocketAddr,
    pub server: Arc<Mutex<Restartable>>,
    /// What to do to the next POST's answer ([`PASS`], [`KILL`], [`GATEWAY`], …).
    pub armed: Arc<AtomicU8>,
    /// Kills done.
    pub kills: Arc<AtomicUsize>,
    /// POSTs whose answers began.
    pub posts: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl Proxy {
    pub fn start(server: Restartable) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let proxy = Self {
            addr: listener.local_addr().unwrap(),
            server: Arc::new(Mutex::new(server)),
            armed: Arc::default(),
            kills: Arc::default(),
            posts: Arc::default(),
            stop: Arc::default(),
        };
        let (server, armed, kills, posts, stop) = (
            proxy.server.clone(),
            proxy.armed.clone(),
            proxy.kills.clone(),
            proxy.posts.clone(),
            proxy.stop.clone(),
        );
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if stop.load(Ordering::Acquire) {
                    break;
                }
                let Ok(client) = client else { continue };
                let (server, armed, kills, posts) =
                    (server.clone(), armed.clone(), kills.clone(), posts.clone());
                std::thread::spawn(move || pipe(client, &server, &armed, &kills, &posts));
            }
        });
        proxy
    }

    /// `http://127.0.0.1:PORT/api/v1`.
    pub fn api(&self) -> String {
        format!("http://{}/api/v1", self.addr)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        let _ = TcpStream::connect(self.addr);
    }
}

/// Carry one client connection to the current server, both ways.
fn pipe(
    mut client: TcpStream,
    server: &Mutex<Restartable>,
    armed: &AtomicU8,
    kills: &AtomicUsize,
    posts: &AtomicUsize,
) {
    let Some(addr) = server.lock().unwrap().addr else {
        return;
    };
    let Ok(mut upstream) = TcpStream::connect(addr) else {
        return;
    };
    // A POST was sent on this connection and its answer has not begun.
    let post_pending = Arc::new(AtomicBool::new(false));
    let (mut from_client, mut to_upstream) =
        (client.try_clone().unwrap(), upstream.try_clone().unwrap());
    let pending = post_pending.clone();
    let forward = std::thread::spawn(move || {
        let mut buffer = [0u8; 16 * 1024];
        loop {
            match from_client.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if buffer[..n].starts_with(b"POST ") {
                        pending.store(true, Ordering::Release);
                    }
                    if to_upstream.write_all(&buffer[..n]).is_err() {
                        break;
                    }
                }
            }
        }
        let _ = to_upstream.shutdown(Shutdown::Write);
    });
    let mut buffer = [0u8; 16 * 1024];
    loop {
        match upstream.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if post_pending.swap(false, Ordering::AcqRel) {
                    posts.fetch_add(1, Ordering::AcqRel);
                    let mode = armed.load(Ordering::Acquire);
                    if mode != GATEWAY_ALWAYS {
                        armed.store(PASS, Ordering::Release);
                    }
                    match mode {
                        KILL => {
                            // Committed, not yet answered: kill -9, start again, lose the answer.
                            server.lock().unwrap().restart();
                            kills.fetch_add(1, Ordering::AcqRel);
                            break;
                        }
                        GATEWAY | GATEWAY_ALWAYS => {
                            let _ = client.write_all(
                                b"HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\n\
                                  content-length: 11\r\nconnection: close\r\n\r\nbad gateway",
                            );
                            break;
                        }
                        _ => {}
                    }
                }
                if client.write_all(&buffer[..n]).is_err() {
                    break;
                }
            }
        }
    }
    let _ = client.shutdown(Shutdown::Both);
    let _ = upstream.shutdown(Shutdown::Both);
    let _ = forward.join();
}
