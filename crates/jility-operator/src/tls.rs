//! HTTPS for `jility serve`: the server's certificate and key from PEM files
//! ([`acceptor`]), and a listener that hands axum connections whose TLS handshake is done
//! ([`TlsListener`]).
//!
//! Handshakes run off the accept path, each in its own task under [`HANDSHAKE_TIMEOUT`]:
//! a client that connects and stays silent, or speaks plain HTTP, or breaks off half-way,
//! costs one task for a few seconds and holds nobody else up.

use std::io::{self, Read as _};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use mcp_common::ToolError;
use rustls_pki_types::pem::{self, PemObject as _};
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

use jility_core::errors;

/// How long a client has to complete its TLS handshake before it is dropped.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Connections whose handshake is done and that axum has not taken yet; a handshake that
/// completes while the queue is full waits for room (its own task, nobody else's).
const QUEUE: usize = 64;

/// How long to pause after an accept error that is not the client's (EMFILE, ENFILE…),
/// so that the loop does not spin while the process is out of descriptors.
const ACCEPT_ERROR_PAUSE: Duration = Duration::from_millis(50);

/// Largest PEM file read: a certificate chain or a key is a few kilobytes.
const MAX_PEM_BYTES: u64 = 1024 * 1024;

/// The protocols offered in ALPN: HTTP/1.1 only, the one the server speaks (it has read
/// deadlines; see `mcp_common::connections`).
const ALPN: [&[u8]; 1] = [b"http/1.1"];

const CERT_HINT: &str = "Give the server's certificate chain as a PEM file: its own certificate \
     first (-----BEGIN CERTIFICATE-----), then any intermediates.";
const KEY_HINT: &str = "Give the certificate's private key as an unencrypted PEM file: PKCS#8 \
     (-----BEGIN PRIVATE KEY-----), PKCS#1 (-----BEGIN RSA PRIVATE KEY-----) or SEC1 \
     (-----BEGIN EC PRIVATE KEY-----).";

/// The TLS side of the server: the certificate chain in `cert` and its private key in `key`
/// (PEM files; the key PKCS#8, PKCS#1 or SEC1, unencrypted), no client certificates, ALPN
/// `http/1.1`, on the ring provider.
///
/// The files are read synchronously (once, at startup). Errors (`invalid_input`) name the
/// file and what is wrong with it, never its contents.
pub fn acceptor(cert: &Path, key: &Path) -> Result<TlsAcceptor, ToolError> {
    let certs = read_certs(cert)?;
    let private_key = read_key(key)?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| ToolError::internal(format!("Cannot set up TLS: {e}")))?
        .with_no_client_auth()
        .with_single_cert(certs, private_key)
        .map_err(|e| config_error(e, cert, key))?;
    config.alpn_protocols = ALPN.iter().map(|p| p.to_vec()).collect();
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// The certificates of the PEM file at `path`, in order (at least one).
fn read_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, ToolError> {
    let what = "TLS certificate";
    let bytes = read_pem_file(path, what, CERT_HINT)?;
    let certs = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| pem_error(&e, path, what, CERT_HINT))?;
    if !certs.is_empty() {
        return Ok(certs);
    }
    let mut message = format!(
        "The {what} file {} holds no PEM certificate",
        path.display()
    );
    if PrivateKeyDer::from_pem_slice(&bytes).is_ok() {
        message.push_str(" but a private key: are the certificate and the key swapped?");
    }
    Err(ToolError::new(errors::INVALID_INPUT, message).with_hint(CERT_HINT))
}

/// The private key of the PEM file at `path` (the first one in it).
fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>, ToolError> {
    let what = "TLS private key";
    let bytes = read_pem_file(path, what, KEY_HINT)?;
    match PrivateKeyDer::from_pem_slice(&bytes) {
        Ok(key) => Ok(key),
        Err(pem::Error::NoItemsFound) => {
            let mut message = format!(
                "The {what} file {} holds no PEM private key",
                path.display()
            );
            if contains(&bytes, b"-----BEGIN ENCRYPTED PRIVATE KEY-----") {
                message.push_str(" it can use: its key is encrypted");
                let hint = format!(
                    "{KEY_HINT} Decrypt it first, e.g. `openssl pkey -in {} -out key.pem`.",
                    path.display()
                );
                return Err(ToolError::new(errors::INVALID_INPUT, message).with_hint(hint));
            }
            if CertificateDer::from_pem_slice(&bytes).is_ok() {
                message.push_str(" but a certificate: are the certificate and the key swapped?");
            }
            Err(ToolError::new(errors::INVALID_INPUT, message).with_hint(KEY_HINT))
        }
        Err(e) => Err(pem_error(&e, path, what, KEY_HINT)),
    }
}

/// The bytes of the file at `path` (the `what` file), refusing oversized ones.
fn read_pem_file(path: &Path, what: &str, hint: &str) -> Result<Vec<u8>, ToolError> {
    let file = std::fs::File::open(path).map_err(|e| {
        let message = match e.kind() {
            io::ErrorKind::NotFound => {
                format!("The {what} file {} does not exist", path.display())
            }
            _ => format!("Cannot open the {what} file {}: {e}", path.display()),
        };
        ToolError::new(errors::INVALID_INPUT, message).with_hint(hint)
    })?;
    let mut bytes = Vec::new();
    file.take(MAX_PEM_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| {
            ToolError::new(
                errors::INVALID_INPUT,
                format!("Cannot read the {what} file {}: {e}", path.display()),
            )
            .with_hint(hint)
        })?;
    if bytes.len() as u64 > MAX_PEM_BYTES {
        return Err(ToolError::new(
            errors::INVALID_INPUT,
            format!(
                "The {what} file {} is larger than {} KiB: not a PEM file of that kind",
                path.display(),
                MAX_PEM_BYTES / 1024
            ),
        )
        .with_hint(hint));
    }
    Ok(bytes)
}

/// A PEM file that cannot be parsed. The parser's own messages can quote a line of the file
/// (a key's, maybe), so only the kind of fault is told.
fn pem_error(err: &pem::Error, path: &Path, what: &str, hint: &str) -> ToolError {
    let fault = match err {
        pem::Error::MissingSectionEnd { .. } => "a PEM section has no END line",
        pem::Error::IllegalSectionStart { .. } => "a PEM BEGIN line is malformed",
        pem::Error::Base64Decode(_) => "a PEM section is not valid base64",
        pem::Error::SectionTooLarge => "a PEM section is too large",
        pem::Error::NoItemsFound => "it holds nothing of the expected kind",
        _ => "it is not valid PEM",
    };
    ToolError::new(
        errors::INVALID_INPUT,
        format!("The {what} file {} is damaged: {fault}", path.display()),
    )
    .with_hint(hint)
}

/// What rustls found wrong with a certificate and key that parsed as PEM.
fn config_error(err: rustls::Error, cert: &Path, key: &Path) -> ToolError {
    let (cert, key) = (cert.display(), key.display());
    let (message, hint) = match err {
        rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch) => (
            format!("The TLS private key in {key} does not match the certificate in {cert}"),
            format!(
                "The key must be the one of the first certificate in {cert} (the server's own; \
                 intermediates follow it)."
            ),
        ),
        rustls::Error::General(_) => (
            format!(
                "The TLS private key in {key} cannot be used: it is not an RSA, ECDSA or Ed25519 key rustls can load"
            ),
            KEY_HINT.to_string(),
        ),
        rustls::Error::InvalidCertificate(e) => (
            format!("The TLS certificate in {cert} cannot be used: {e}"),
            CERT_HINT.to_string(),
        ),
        other => (
            format!("The TLS certificate {cert} and key {key} cannot be used: {other}"),
            format!("{CERT_HINT} {KEY_HINT}"),
        ),
    };
    ToolError::new(errors::INVALID_INPUT, message).with_hint(hint)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// One connection whose handshake is done, with its peer's address.
type Established = (TlsStream<TcpStream>, SocketAddr);

/// A TLS listener for [`axum::serve`]: TCP connections are accepted by a task of their own
/// (with `TCP_NODELAY`), each handshake runs in its own task under [`HANDSHAKE_TIMEOUT`], and
/// [`accept`](axum::serve::Listener::accept) yields the connections whose handshake
/// succeeded. Failed handshakes are logged (debug) and dropped.
///
/// The accepting task starts at the first `accept` (so on the runtime that serves) and stops,
/// closing the TCP listener, once this listener is dropped.
pub struct TlsListener {
    /// The TCP listener's address, or why the OS would not tell it.
    local_addr: Result<SocketAddr, (io::ErrorKind, String)>,
    /// The parts of the accepting task until it starts.
    idle: Option<AcceptLoop>,
    established: mpsc::Receiver<Established>,
}

impl TlsListener {
    pub fn new(listener: TcpListener, acceptor: TlsAcceptor) -> Self {
        let local_addr = listener.local_addr().map_err(|e| (e.kind(), e.to_string()));
        let (tx, established) = mpsc::channel(QUEUE);
        Self {
            local_addr,
            idle: Some(AcceptLoop {
                listener,
                acceptor,
                tx,
                handshake_timeout: HANDSHAKE_TIMEOUT,
            }),
            established,
        }
    }

    /// A shorter handshake timeout, to test it.
    #[cfg(test)]
    fn with_handshake_timeout(mut self, timeout: Duration) -> Self {
        if let Some(idle) = &mut self.idle {
            idle.handshake_timeout = timeout;
        }
        self
    }
}

impl std::fmt::Debug for TlsListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsListener")
            .field("local_addr", &self.local_addr)
            .field("started", &self.idle.is_none())
            .finish_non_exhaustive()
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        if let Some(idle) = self.idle.take() {
            tokio::spawn(idle.run());
        }
        match self.established.recv().await {
            Some(established) => established,
            None => {
                // Only if the accepting task died: serve nothing rather than panic.
                tracing::error!(local = ?self.local_addr, "the TLS accept loop stopped");
                std::future::pending().await
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.local_addr
            .clone()
            .map_err(|(kind, message)| io::Error::new(kind, message))
    }
}

/// The accepting task's parts.
struct AcceptLoop {
    listener: TcpListener,
    acceptor: TlsAcceptor,
    tx: mpsc::Sender<Established>,
    handshake_timeout: Duration,
}

impl AcceptLoop {
    /// Accept until the [`TlsListener`] is dropped, handing each connection to a handshake
    /// task.
    async fn run(self) {
        loop {
            let accepted = tokio::select! {
                () = self.tx.closed() => return,
                accepted = self.listener.accept() => accepted,
            };
            let (tcp, peer) = match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    on_accept_error(&e).await;
                    continue;
                }
            };
            if let Err(e) = tcp.set_nodelay(true) {
                tracing::trace!(%peer, error = %e, "cannot set TCP_NODELAY");
            }
            tokio::spawn(handshake(
                self.acceptor.clone(),
                tcp,
                peer,
                self.tx.clone(),
                self.handshake_timeout,
            ));
        }
    }
}

/// One client's handshake, passed on when it succeeds in time.
async fn handshake(
    acceptor: TlsAcceptor,
    tcp: TcpStream,
    peer: SocketAddr,
    tx: mpsc::Sender<Established>,
    timeout: Duration,
) {
    let done = tokio::select! {
        // The listener is gone: nobody will take the connection.
        () = tx.closed() => return,
        done = tokio::time::timeout(timeout, acceptor.accept(tcp)) => done,
    };
    match done {
        Ok(Ok(tls)) => {
            // Fails only when the listener is gone meanwhile: the connection is dropped.
            let _ = tx.send((tls, peer)).await;
        }
        Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
        Err(_) => tracing::debug!(%peer, ?timeout, "TLS handshake timed out"),
    }
}

/// As axum's own listener: a client that gave up is nothing; anything else (out of file
/// descriptors…) is logged, and the loop pauses so as not to spin.
async fn on_accept_error(e: &io::Error) {
    if matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    ) {
        tracing::debug!(error = %e, "a client went away before being accepted");
        return;
    }
    tracing::error!(error = %e, "accept error");
    tokio::time::sleep(ACCEPT_ERROR_PAUSE).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::serve::Listener as _;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    /// Text a message must never quote (valid base64: "secret-secret-secret!").
    const SECRET: &str = "c2VjcmV0LXNlY3JldC1zZWNyZXQh";

    fn garbage() -> String {
        format!("not a certificate\n{SECRET}\n")
    }

    /// A PEM section of `label` whose body is valid base64 but no valid DER.
    fn fake_section(label: &str) -> String {
        format!("-----BEGIN {label}-----\n{SECRET}\n-----END {label}-----\n")
    }

    struct Files {
        dir: tempfile::TempDir,
    }

    impl Files {
        fn new() -> Self {
            Self {
                dir: tempfile::tempdir().unwrap(),
            }
        }

        fn write(&self, name: &str, text: &str) -> std::path::PathBuf {
            let path = self.dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path
        }
    }

    fn err_of(cert: &Path, key: &Path) -> ToolError {
        let err = acceptor(cert, key).err().unwrap();
        assert_eq!(err.code, errors::INVALID_INPUT, "{err}");
        assert!(err.hint.is_some(), "{err}");
        assert!(!err.message.contains(SECRET), "quotes the file: {err}");
        assert!(
            !err.hint_text().contains(SECRET),
            "quotes the file: {err:?}"
        );
        err
    }

    #[test]
    fn a_missing_file_is_named() {
        let files = Files::new();
        let key = files.write("key.pem", &fake_section("PRIVATE KEY"));
        let missing = files.dir.path().join("nope.pem");
        let err = err_of(&missing, &key);
        assert!(err.message.contains("does not exist"), "{err}");
        assert!(err.message.contains("certificate"), "{err}");
        assert!(
            err.message.contains(&missing.display().to_string()),
            "{err}"
        );

        let cert = files.write("cert.pem", &fake_section("CERTIFICATE"));
        let err = err_of(&cert, &missing);
        assert!(err.message.contains("does not exist"), "{err}");
        assert!(err.message.contains("private key"), "{err}");
        assert!(
            err.message.contains(&missing.display().to_string()),
            "{err}"
        );
    }

    #[test]
    fn a_file_without_a_certificate_is_refused() {
        let files = Files::new();
        let cert = files.write("cert.pem", &garbage());
        let key = files.write("key.pem", &fake_section("PRIVATE KEY"));
        let err = err_of(&cert, &key);
        assert!(err.message.contains("no PEM certificate"), "{err}");
        assert!(err.message.contains(&cert.display().to_string()), "{err}");
        assert!(!err.message.contains("swapped"), "{err}");

        // The files given the wrong way round.
        let err = err_of(&key, &cert);
        assert!(err.message.contains("no PEM certificate"), "{err}");
        assert!(err.message.contains("swapped"), "{err}");

        // Empty, and a PEM section that is never closed.
        let empty = files.write("empty.pem", "");
        assert!(err_of(&empty, &key).message.contains("no PEM certificate"));
        let open = files.write(
            "open.pem",
            &format!("-----BEGIN CERTIFICATE-----\n{SECRET}\n"),
        );
        let err = err_of(&open, &key);
        assert!(err.message.contains("no END line"), "{err}");
        let bad = files.write(
            "bad.pem",
            &format!("-----BEGIN CERTIFICATE-----\n{SECRET}!\n-----END CERTIFICATE-----\n"),
        );
        let err = err_of(&bad, &key);
        assert!(err.message.contains("not valid base64"), "{err}");
    }

    #[test]
    fn a_key_file_without_a_key_is_refused() {
        let files = Files::new();
        let cert = files.write("cert.pem", &fake_section("CERTIFICATE"));
        let key = files.write("key.pem", &garbage());
        let err = err_of(&cert, &key);
        assert!(err.message.contains("no PEM private key"), "{err}");
        assert!(err.message.contains(&key.display().to_string()), "{err}");
        assert!(err.hint_text().contains("PKCS#8"), "{err:?}");

        let err = err_of(&cert, &cert);
        assert!(err.message.contains("swapped"), "{err}");

        let encrypted = files.write("enc.pem", &fake_section("ENCRYPTED PRIVATE KEY"));
        let err = err_of(&cert, &encrypted);
        assert!(err.message.contains("encrypted"), "{err}");
    }

    #[test]
    fn a_key_rustls_cannot_load_is_refused() {
        let files = Files::new();
        let cert = files.write("cert.pem", &fake_section("CERTIFICATE"));
        let key = files.write("key.pem", &fake_section("PRIVATE KEY"));
        let err = err_of(&cert, &key);
        assert!(err.message.contains("cannot be used"), "{err}");
        assert!(err.message.contains(&key.display().to_string()), "{err}");
    }

    /// A server config without any certificate: every handshake fails, which is all the
    /// listener tests need (a working certificate is the integration tests' business).
    fn certless_acceptor() -> TlsAcceptor {
        #[derive(Debug)]
        struct NoCert;
        impl rustls::server::ResolvesServerCert for NoCert {
            fn resolve(
                &self,
                _: rustls::server::ClientHello<'_>,
            ) -> Option<Arc<rustls::sign::CertifiedKey>> {
                None
            }
        }
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(NoCert));
        TlsAcceptor::from(Arc::new(config))
    }

    async fn listener(timeout: Duration) -> TlsListener {
        let tcp = TcpListener::bind("127.0.0.1:0").await.unwrap();
        TlsListener::new(tcp, certless_acceptor()).with_handshake_timeout(timeout)
    }

    /// Whether the server closes `stream` within `within` (EOF or reset).
    async fn closed_within(stream: &mut TcpStream, within: Duration) -> bool {
        let mut buf = [0u8; 1024];
        tokio::time::timeout(within, async {
            loop {
                match stream.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
            }
        })
        .await
        .is_ok()
    }

    #[tokio::test]
    async fn a_silent_client_holds_nobody_up_and_is_dropped_in_time() {
        let mut listener = listener(Duration::from_secs(2)).await;
        let addr = listener.local_addr().unwrap();
        assert_ne!(addr.port(), 0);
        let accepting = tokio::spawn(async move {
            let _ = listener.accept().await;
            panic!("a failed handshake was handed to the server");
        });

        let mut silent = TcpStream::connect(addr).await.unwrap();
        let mut plain = TcpStream::connect(addr).await.unwrap();
        plain
            .write_all(b"GET /api/v1/tickets HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        assert!(
            closed_within(&mut plain, Duration::from_secs(1)).await,
            "the plain-HTTP client waited behind the silent one"
        );
        assert!(
            closed_within(&mut silent, Duration::from_secs(5)).await,
            "the silent client was not dropped after the handshake timeout"
        );
        assert!(!accepting.is_finished());
        accepting.abort();
    }

    #[tokio::test]
    async fn dropping_the_listener_closes_the_port() {
        let mut listener = listener(HANDSHAKE_TIMEOUT).await;
        let addr = listener.local_addr().unwrap();
        // Start the accepting task, then drop the listener.
        let _ = tokio::time::timeout(Duration::from_millis(50), listener.accept()).await;
        drop(listener);
        let mut refused = false;
        for _ in 0..100 {
            if TcpStream::connect(addr).await.is_err() {
                refused = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(refused, "the port still accepts connections");
    }
}
