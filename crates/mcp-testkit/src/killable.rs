//! A server spoken to over raw stdio pipes, so that it can be killed (SIGKILL) at any moment
//! while requests are in flight: the fault tests' writers.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test harness

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A frame a server wrote: which server (its index), the frame (`{"not_json": line}` for a
/// line that is not JSON). A last line cut short by a kill (no newline before end of file)
/// is no frame: a client's line reader never delivers it, so the request it answered has
/// no answer, as when the kill came before the write.
pub type Frame = (usize, Value);

pub struct Killable {
    pub index: usize,
    child: Child,
    stdin: Option<ChildStdin>,
    /// Runs to the end of stdout; true when the last line had no newline.
    reader: Option<JoinHandle<bool>>,
    log: PathBuf,
}

impl Killable {
    /// Start `command` with its stderr in the file `log`; every frame it writes on stdout
    /// goes to `tx`, tagged with `index`.
    pub fn spawn(
        mut command: Command,
        log: PathBuf,
        index: usize,
        tx: mpsc::Sender<Frame>,
    ) -> Self {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("the server starts");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut stdout = BufReader::new(stdout);
            let mut line = Vec::new();
            loop {
                line.clear();
                match stdout.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => return false,
                    Ok(_) if line.last() != Some(&b'\n') => return true,
                    Ok(_) => {}
                }
                let frame = serde_json::from_slice(&line).unwrap_or_else(
                    |_| json!({"not_json": String::from_utf8_lossy(&line).trim_end()}),
                );
                if tx.send((index, frame)).is_err() {
                    return false;
                }
            }
        });
        Self {
            index,
            child,
            stdin,
            reader: Some(reader),
            log,
        }
    }

    /// Send one frame; false when the pipe is closed (the process is gone).
    pub fn send(&mut self, frame: &Value) -> bool {
        let Some(stdin) = self.stdin.as_mut() else {
            return false;
        };
        writeln!(stdin, "{frame}")
            .and_then(|()| stdin.flush())
            .is_ok()
    }

    /// What it wrote to stderr so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SIGKILL, then read whatever it wrote before dying (the reader runs to end of file); a
    /// frame the kill cut short is dropped. True when there was one.
    pub fn kill(&mut self) -> bool {
        self.child.kill().expect("SIGKILL");
        self.child.wait().unwrap();
        self.stdin = None;
        self.reader
            .take()
            .is_some_and(|reader| reader.join().unwrap())
    }

    /// Close stdin: the server answers what is in flight and exits; its exit status.
    pub fn finish(&mut self) -> ExitStatus {
        self.stdin = None;
        let deadline = Instant::now() + Duration::from_secs(30);
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "the server did not exit");
            std::thread::sleep(Duration::from_millis(10));
        };
        if let Some(reader) = self.reader.take() {
            let cut_short = reader.join().unwrap();
            assert!(!cut_short, "the server's last frame has no newline");
        }
        status
    }
}

impl Drop for Killable {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The seed of a fault test's draws: the environment variable `var` when it holds a
/// number, else `default`.
pub fn seed(var: &str, default: u64) -> u64 {
    std::env::var(var)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}
