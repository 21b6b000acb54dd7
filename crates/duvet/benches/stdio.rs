//! Latency, cold-start and memory benchmark of `duvet mcp` over stdio, with the published
//! `duvet report` (0.4.3) on the same project as the peer.
//!
//! Generates, in a temp dir, a Duvet 0.4 project the size of a large real user: 1,000 Rust
//! source files, 40 IETF specifications in the RFC Editor's plain-text layout (cached under
//! `.duvet/specifications`, 50–100 KB each, 40–60 numbered sections, page breaks), and 2,500
//! annotations (implementation and test citations in the sources, TODO and exception entries
//! in `.duvet/todos` and `.duvet/exceptions`) quoting real sentences of those texts.
//!
//! Measures:
//! 1. **Cold**: spawn `duvet mcp` in the project → first answer of `list_uncited_requirements`
//!    (process start, `initialize`, the analysis), 10 fresh processes.
//! 2. **Warm**: p50/p99 of each of the 11 tools (300 calls each, round-robin, each call preceded
//!    by an MCP `ping`), with ratios to the ping p50. Every result is checked.
//! 3. **Memory**: the server's VmRSS/VmHWM from `/proc/<pid>/status`.
//! 4. **Peer**: `duvet report` of the published crate (`/tmp/duvet-peer/bin/duvet`, or
//!    `$DUVET_PEER`; skipped with the reason when absent) in a copy of the same project: a first
//!    run writes `.duvet/requirements`, then 5 measured runs: wall time, peak RSS, exit status.
//! 5. **Diagnostic**: our cold start in the peer's copy, where `.duvet/requirements` exists.
//! 6. **`duvet report`**: ours against the peer's, `--json` each, run in turn in the peer's copy
//!    (or, without the peer, a copy of our own) and paired run by run, the two JSON files
//!    compared byte for byte; and our `--html` against our `--json`, paired the same way.
//!
//! Prints a Markdown report and writes it to `target/duvet-bench.md`. With
//! `DUVET_BENCH_KEEP=<dir>`, a copy of the generated project is kept in `<dir>` (for profiling).
//!
//! Run: `cargo bench -p duvet --bench stdio`

// The benchmark reports to the terminal and aborts on any setup failure.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

use std::{
    collections::{BTreeMap, HashSet},
    fmt::Write as _,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use mcp_testkit::{
    McpProcess,
    bench::{
        self, Memory, Rng, TimedCall, call, machine, met, mib, ms_scaled, percentile, ping,
        read_memory,
    },
};
use serde_json::{Value, json};

// ---- sizes and targets ----------------------------------------------------------------------

const SPECS: usize = 40;
const SRC_FILES: usize = 850;
const TEST_FILES: usize = 150;
/// Source files in `src/` that carry annotations (the others are plain code).
const ANNOTATED_SRC_FILES: usize = 700;
/// Citations in `src/` (default type implementation).
const IMPL_CITATIONS: usize = 1_950;
/// Citations in `tests/` (the `[[source]]` entry's type is `test`).
const TEST_CITATIONS: usize = 250;
/// `//= type=test` citations in the `#[cfg(test)]` modules of `src/` files.
const INLINE_TEST_CITATIONS: usize = 100;
const TODOS: usize = 120;
const EXCEPTIONS: usize = 80;
const ANNOTATIONS: usize =
    IMPL_CITATIONS + TEST_CITATIONS + INLINE_TEST_CITATIONS + TODOS + EXCEPTIONS;

const COLD_RUNS: usize = 10;
const WARMUP: usize = 1;
const ITERS: usize = 300;
const PEER_RUNS: usize = 5;
/// Cold starts in the peer's copy (with the requirement files `duvet report` wrote).
const DIAGNOSTIC_COLD_RUNS: usize = 5;
const PEER_TIMEOUT: Duration = Duration::from_secs(120);

const COLD_TARGET_MS: f64 = 300.0;
const WARM_TARGET_MS: f64 = 5.0;

const BASE_URL: &str = "https://www.rfc-editor.org/rfc/rfc";
const DEFAULT_PEER: &str = "/tmp/duvet-peer/bin/duvet";

// ---- a deterministic generator --------------------------------------------------------------

// ---- vocabulary -----------------------------------------------------------------------------

const ACTORS: &[&str] = &[
    "endpoint",
    "client",
    "server",
    "sender",
    "receiver",
    "peer",
    "implementation",
    "intermediary",
    "proxy",
    "recipient",
    "gateway",
    "relay",
    "initiator",
    "responder",
];

const OBJECTS: &[&str] = &[
    "STREAM frame",
    "ACK frame",
    "RESET_STREAM frame",
    "PING frame",
    "CRYPTO frame",
    "DATAGRAM frame",
    "MAX_DATA frame",
    "packet",
    "datagram",
    "message",
    "record",
    "session ticket",
    "connection ID",
    "handshake message",
    "control message",
    "payload",
    "header field",
    "extension",
    "address validation token",
    "certificate",
    "key update",
    "probe packet",
    "stateless reset",
    "path challenge",
    "error code",
    "transport parameter",
    "version negotiation packet",
    "retry packet",
    "SETTINGS frame",
    "priority update",
    "flow control credit",
];

const FIELDS: &[&str] = &[
    "Length",
    "Stream ID",
    "Offset",
    "Sequence Number",
    "Reason Phrase",
    "Error Code",
    "Largest Acknowledged",
    "ACK Delay",
    "Retire Prior To",
    "Maximum Data",
    "Token Length",
    "Version",
    "Flags",
    "Reserved",
    "Frame Type",
    "Payload Length",
];

/// (base form, past participle).
const VERBS: &[(&str, &str)] = &[
    ("send", "sent"),
    ("accept", "accepted"),
    ("discard", "discarded"),
    ("retransmit", "retransmitted"),
    ("validate", "validated"),
    ("process", "processed"),
    ("buffer", "buffered"),
    ("acknowledge", "acknowledged"),
    ("ignore", "ignored"),
    ("reject", "rejected"),
    ("encrypt", "encrypted"),
    ("forward", "forwarded"),
    ("retain", "retained"),
    ("generate", "generated"),
    ("advertise", "advertised"),
    ("verify", "verified"),
    ("coalesce", "coalesced"),
    ("drop", "dropped"),
    ("queue", "queued"),
    ("reorder", "reordered"),
];

const CONDITIONS: &[&str] = &[
    "before the handshake is confirmed",
    "after the connection is closed",
    "when the flow control limit is reached",
    "if the stream is in the closed state",
    "unless the peer has advertised support for this extension",
    "while a path validation is in progress",
    "once the idle timeout has expired",
    "when it receives an unknown frame type",
    "if the length field exceeds the remaining payload",
    "after a key update has been initiated",
    "when the congestion window is exhausted",
    "before sending any application data",
    "on a path that has not been validated",
    "if the connection flow control window is smaller than the stream window",
    "in response to a packet that only contains acknowledgments",
    "within three times the current probe timeout",
    "when the peer exceeds its advertised stream limit",
    "if the final size of the stream changes",
    "for the duration of the draining period",
    "at a rate that exceeds the available flow control credit",
    "during the initial round trip",
    "after loss of the previous packet is declared",
    "when migrating to a new local address",
    "if the token was issued for a different connection",
    "in a packet that is not authenticated",
    "before it has received the transport parameters of its peer",
    "when its receive buffer is full",
    "if the priority of the stream is unknown",
];

const CONSTRAINTS: &[&str] = &[
    "set to zero",
    "encoded as a variable-length integer",
    "at least 1200 bytes",
    "no larger than the value advertised by the peer",
    "unique within the connection",
    "identical in every packet of the same flight",
    "larger than the largest value previously sent",
    "covered by the packet protection",
    "chosen at random for each new connection",
    "smaller than the maximum stream data limit",
];

const ERRORS: &[&str] = &[
    "PROTOCOL_VIOLATION",
    "FLOW_CONTROL_ERROR",
    "STREAM_STATE_ERROR",
    "FRAME_ENCODING_ERROR",
    "TRANSPORT_PARAMETER_ERROR",
    "INTERNAL_ERROR",
    "CONNECTION_ID_LIMIT_ERROR",
    "KEY_UPDATE_ERROR",
    "FINAL_SIZE_ERROR",
    "INVALID_TOKEN",
];

const TOPICS: &[&str] = &[
    "flow control",
    "congestion control",
    "path validation",
    "loss detection",
    "key update",
    "connection migration",
    "stream multiplexing",
    "version negotiation",
    "address validation",
    "idle timeout",
    "packet protection",
    "stream prioritization",
];

const THREATS: &[&str] = &[
    "reordering by the network",
    "amplification attacks",
    "off-path injection",
    "replay of earlier packets",
    "traffic analysis",
    "resource exhaustion",
];

const TITLE_ADJ: &[&str] = &[
    "Reliable",
    "Secure",
    "Multiplexed",
    "Lightweight",
    "Extensible",
    "Unreliable",
    "Ordered",
    "Encrypted",
    "Adaptive",
    "Scalable",
];

const TITLE_NOUN: &[&str] = &[
    "Stream",
    "Datagram",
    "Session",
    "Message",
    "Transport",
    "Tunnel",
    "Record",
    "Channel",
    "Media",
    "Control",
];

const TITLE_SUFFIX: &[&str] = &[
    "Protocol",
    "Framing Layer",
    "Extensions",
    "Negotiation",
    "Signaling",
    "Delivery",
    "Mapping",
    "Profile",
];

const SECTION_HEADS: &[&str] = &[
    "Frame Processing",
    "Stream States",
    "Connection Establishment",
    "Flow Control",
    "Error Handling",
    "Packet Format",
    "Version Negotiation",
    "Key Update",
    "Loss Detection",
    "Congestion Control",
    "Path Validation",
    "Connection Migration",
    "Idle Timeout",
    "Address Validation",
    "Stream Prioritization",
    "Extension Points",
    "Transport Parameters",
    "Stateless Reset",
    "Handshake Completion",
    "Data Limits",
];

const SURNAMES: &[&str] = &[
    "Iyengar",
    "Thomson",
    "Bishop",
    "Kuehlewind",
    "Pauly",
    "Duke",
    "Nottingham",
    "Huitema",
    "Rescorla",
    "Schinazi",
    "Seemann",
    "Swett",
    "Oku",
    "Pardue",
    "Ghedini",
    "Tuexen",
];

const MONTHS: &[&str] = &[
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

const KEYWORDS: &[(&str, u32)] = &[
    ("MUST", 40),
    ("MUST NOT", 15),
    ("SHOULD", 18),
    ("SHOULD NOT", 5),
    ("MAY", 15),
    ("SHALL", 4),
    ("SHALL NOT", 3),
];

const BCP14: &str = "The key words \"MUST\", \"MUST NOT\", \"REQUIRED\", \"SHALL\", \"SHALL NOT\", \"SHOULD\", \"SHOULD NOT\", \"RECOMMENDED\", \"NOT RECOMMENDED\", \"MAY\", and \"OPTIONAL\" in this document are to be interpreted as described in BCP 14 [RFC2119] [RFC8174] when, and only when, they appear in all capitals, as shown here.";

fn keyword(rng: &mut Rng) -> &'static str {
    let total: u32 = KEYWORDS.iter().map(|(_, w)| w).sum();
    let mut x = (rng.next_u64() % u64::from(total)) as u32;
    for (kw, w) in KEYWORDS {
        if x < *w {
            return kw;
        }
        x -= w;
    }
    "MUST"
}

fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u', 'A', 'E', 'I', 'O', 'U']) {
        "an"
    } else {
        "a"
    }
}

fn with_article(word: &str) -> String {
    format!("{} {word}", article(word))
}

/// `packet` → `packets`, `proxy` → `proxies`.
fn plural(word: &str) -> String {
    match word.strip_suffix('y') {
        Some(stem) if !stem.ends_with(['a', 'e', 'o', 'u']) => format!("{stem}ies"),
        _ => format!("{word}s"),
    }
}

/// Title case for headings (`session ticket` → `Session Ticket`; `ACK frame` → `ACK Frame`).
fn title_case(s: &str) -> String {
    s.split(' ').map(capitalize).collect::<Vec<_>>().join(" ")
}

fn capitalize(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A sentence stating a requirement (it has an unquoted RFC 2119 keyword).
fn requirement_sentence(rng: &mut Rng) -> String {
    let actor = rng.pick(ACTORS);
    let object = rng.pick(OBJECTS);
    let (verb, _) = rng.pick(VERBS);
    let cond = rng.pick(CONDITIONS);
    let objects = plural(object);
    let kw = keyword(rng);
    let s = match rng.below(9) {
        0 | 1 => format!(
            "{} {kw} {verb} {} {cond}.",
            with_article(actor),
            with_article(object)
        ),
        2 => format!(
            "{} that receives {} {cond} {kw} {verb} it.",
            with_article(actor),
            with_article(object)
        ),
        3 => format!(
            "{} {kw} treat receipt of {} {cond} as a connection error of type {}.",
            with_article(actor),
            with_article(object),
            rng.pick(ERRORS)
        ),
        4 => format!(
            "The {} field of {} {kw} be {}.",
            rng.pick(FIELDS),
            with_article(object),
            rng.pick(CONSTRAINTS)
        ),
        5 => format!(
            "When {} is in use, {} {kw} {verb} the {object} {cond}.",
            rng.pick(TOPICS),
            with_article(actor)
        ),
        6 => format!(
            "It is RECOMMENDED that {} {verb} every {object} {cond}.",
            with_article(actor)
        ),
        7 => {
            let (verb2, _) = rng.pick(VERBS);
            format!(
                "{} MAY {verb} {objects} {cond}, but it MUST NOT {verb2} them {}.",
                with_article(actor),
                rng.pick(CONDITIONS)
            )
        }
        _ => format!(
            "To avoid {}, {} {kw} {verb} no more than {} {objects} {cond}.",
            rng.pick(THREATS),
            with_article(actor),
            rng.range(2, 16)
        ),
    };
    capitalize(&s)
}

/// A descriptive sentence without keywords.
fn prose_sentence(rng: &mut Rng) -> String {
    let actor = rng.pick(ACTORS);
    let object = rng.pick(OBJECTS);
    let (_, past) = rng.pick(VERBS);
    let (actors, objects) = (plural(actor), plural(object));
    let s = match rng.below(10) {
        0 => format!(
            "This section describes how {} uses {objects} {}.",
            with_article(actor),
            rng.pick(CONDITIONS)
        ),
        1 => format!(
            "The {object} carries the {} field and the {} field.",
            rng.pick(FIELDS),
            rng.pick(FIELDS)
        ),
        2 => format!(
            "In practice, most {actors} handle {objects} {}.",
            rng.pick(CONDITIONS)
        ),
        3 => format!(
            "Figure {} shows the format of the {object}.",
            rng.range(1, 40)
        ),
        4 => format!(
            "See Section {}.{} for details on {}.",
            rng.range(2, 12),
            rng.range(1, 6),
            rng.pick(TOPICS)
        ),
        5 => format!(
            "Note that the {object} is not protected against {}.",
            rng.pick(THREATS)
        ),
        6 => format!(
            "The {} field contains the identifier of the {object} that is {past}.",
            rng.pick(FIELDS)
        ),
        7 => format!(
            "{} is described in more detail in [RFC{}].",
            capitalize(rng.pick(TOPICS)),
            rng.range(7000, 9700)
        ),
        8 => format!(
            "Earlier versions of this protocol {past} {objects} {}.",
            rng.pick(CONDITIONS)
        ),
        _ => format!(
            "This design allows {actors} to handle {objects} without additional round trips during {}.",
            rng.pick(TOPICS)
        ),
    };
    capitalize(&s)
}

// ---- specifications -------------------------------------------------------------------------

/// A requirement sentence of a generated specification.
#[derive(Clone)]
struct Req {
    spec: usize,
    section: String,
    /// The sentence, whitespace-normalized (as the server identifies it).
    text: String,
}

struct SpecDoc {
    number: usize,
    url: String,
    text: String,
    sections: usize,
    requirements: Vec<Req>,
}

/// Wrap `text` at 72 columns; the first line starts with `first`, the others with `rest`.
fn wrap(text: &str, first: &str, rest: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = first.to_string();
    let mut empty = true;
    for word in text.split_whitespace() {
        if !empty && line.len() + 1 + word.len() > 72 {
            lines.push(std::mem::replace(&mut line, rest.to_string()));
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    lines.push(line);
    lines
}

/// `left`, `center` and `right` laid out in 72 columns.
fn columns(left: &str, center: &str, right: &str) -> String {
    let width = 72;
    let mut line = left.to_string();
    let center_at = (width - center.len()) / 2;
    let center_at = center_at.max(line.len() + 2);
    line.push_str(&" ".repeat(center_at - line.len()));
    line.push_str(center);
    let right_at = (width - right.len()).max(line.len() + 2);
    line.push_str(&" ".repeat(right_at - line.len()));
    line.push_str(right);
    line
}

fn right_aligned(left: &str, right: &str) -> String {
    let pad = 72usize.saturating_sub(left.len() + right.len()).max(2);
    format!("{left}{}{right}", " ".repeat(pad))
}

/// Lines of the document without page furniture, in blocks that stay on one page.
struct Body {
    blocks: Vec<Vec<String>>,
    /// A heading waiting for the block that follows it (headings are not left at the bottom of
    /// a page).
    pending_heading: Vec<String>,
}

impl Body {
    /// A paragraph (or figure, list item, ...) and the blank line after it.
    fn block(&mut self, lines: Vec<String>) {
        let mut block = std::mem::take(&mut self.pending_heading);
        block.extend(lines);
        block.push(String::new());
        self.blocks.push(block);
    }

    /// Lines that may be split across pages (a table of contents), then a blank line.
    fn lines(&mut self, lines: Vec<String>) {
        let mut first = std::mem::take(&mut self.pending_heading);
        let mut lines = lines.into_iter();
        first.extend(lines.next());
        self.blocks.push(first);
        self.blocks.extend(lines.map(|l| vec![l]));
        if let Some(last) = self.blocks.last_mut() {
            last.push(String::new());
        }
    }

    fn heading(&mut self, line: String) {
        if !self.pending_heading.is_empty() {
            let heading = std::mem::take(&mut self.pending_heading);
            self.blocks.push(heading);
        }
        self.pending_heading = vec![line, String::new()];
    }
}

struct SectionPlan {
    id: String,
    title: String,
    kind: SectionKind,
}

#[derive(Clone, Copy, PartialEq)]
enum SectionKind {
    Intro,
    Conventions,
    Terminology,
    Body { has_children: bool },
    Security,
    Iana,
    References,
    ReferenceList { normative: bool },
}

fn plan_sections(rng: &mut Rng) -> Vec<SectionPlan> {
    let total = rng.range(40, 60);
    let fixed = 7; // 1, 1.1, 1.2, security, IANA, references (.1, .2 counted below)
    let top = rng.range(7, 11);
    let subs = total - fixed - top;
    let mut children = vec![0usize; top];
    for _ in 0..subs {
        let t = rng.below(top);
        children[t] += 1;
    }
    let mut plan = vec![
        SectionPlan {
            id: "1".into(),
            title: "Introduction".into(),
            kind: SectionKind::Intro,
        },
        SectionPlan {
            id: "1.1".into(),
            title: "Conventions and Definitions".into(),
            kind: SectionKind::Conventions,
        },
        SectionPlan {
            id: "1.2".into(),
            title: "Terminology".into(),
            kind: SectionKind::Terminology,
        },
    ];
    let mut used_heads = HashSet::new();
    let mut head = |rng: &mut Rng| loop {
        let h = rng.pick(SECTION_HEADS);
        let candidate = if used_heads.contains(h) {
            format!("{h} for {}", title_case(rng.pick(OBJECTS)))
        } else {
            h.to_string()
        };
        if used_heads.insert(candidate.clone()) {
            return candidate;
        }
    };
    for (t, &count) in children.iter().enumerate() {
        let n = t + 2;
        plan.push(SectionPlan {
            id: n.to_string(),
            title: head(rng),
            kind: SectionKind::Body {
                has_children: count > 0,
            },
        });
        let mut sub = 0;
        let mut subsub = 0;
        for c in 0..count {
            if c > 0 && subsub < 3 && rng.chance(0.3) {
                subsub += 1;
                plan.push(SectionPlan {
                    id: format!("{n}.{sub}.{subsub}"),
                    title: head(rng),
                    kind: SectionKind::Body {
                        has_children: false,
                    },
                });
            } else {
                sub += 1;
                subsub = 0;
                plan.push(SectionPlan {
                    id: format!("{n}.{sub}"),
                    title: head(rng),
                    kind: SectionKind::Body {
                        has_children: false,
                    },
                });
            }
        }
    }
    let n = top + 2;
    plan.push(SectionPlan {
        id: n.to_string(),
        title: "Security Considerations".into(),
        kind: SectionKind::Security,
    });
    plan.push(SectionPlan {
        id: (n + 1).to_string(),
        title: "IANA Considerations".into(),
        kind: SectionKind::Iana,
    });
    plan.push(SectionPlan {
        id: (n + 2).to_string(),
        title: "References".into(),
        kind: SectionKind::References,
    });
    plan.push(SectionPlan {
        id: format!("{}.1", n + 2),
        title: "Normative References".into(),
        kind: SectionKind::ReferenceList { normative: true },
    });
    plan.push(SectionPlan {
        id: format!("{}.2", n + 2),
        title: "Informative References".into(),
        kind: SectionKind::ReferenceList { normative: false },
    });
    plan
}

/// A paragraph of `n` sentences, each a requirement with probability `p`; requirement
/// sentences are recorded in `reqs`.
fn paragraph(rng: &mut Rng, n: usize, p: f64, reqs: &mut Vec<String>) -> String {
    let mut sentences = Vec::with_capacity(n);
    for _ in 0..n {
        if rng.chance(p) {
            let s = requirement_sentence(rng);
            reqs.push(s.clone());
            sentences.push(s);
        } else {
            sentences.push(prose_sentence(rng));
        }
    }
    sentences.join(" ")
}

fn figure(rng: &mut Rng, number: usize) -> Vec<String> {
    let object = capitalize(rng.pick(OBJECTS));
    let mut lines = vec![format!("      {} {{", object.replace(' ', "_"))];
    lines.push(format!("        Type (i) = 0x{:02x},", rng.range(1, 0x3f)));
    for _ in 0..rng.range(2, 5) {
        let field = rng.pick(FIELDS);
        let size = rng.pick(&["(i)", "(8)", "(32)", "(64)", "(..)"]);
        lines.push(format!("        {field} {size},"));
    }
    lines.push("      }".into());
    lines.push(String::new());
    let caption = format!("Figure {number}: {object} Format");
    let pad = (72 - caption.len()) / 2;
    lines.push(format!("{}{caption}", " ".repeat(pad)));
    lines
}

fn generate_spec(index: usize, rng: &mut Rng) -> SpecDoc {
    let number = 7_900 + 53 * index;
    let url = format!("{BASE_URL}{number}");
    let noun = rng.pick(TITLE_NOUN);
    let suffix = rng.pick(TITLE_SUFFIX);
    let title = format!("The {} {noun} {suffix}", rng.pick(TITLE_ADJ));
    let short = format!("{noun} {suffix}");
    let date = format!("{} {}", rng.pick(MONTHS), rng.range(2012, 2024));
    let surname = rng.pick(SURNAMES);
    let initial = (b'A' + rng.below(26) as u8) as char;

    let mut body = Body {
        blocks: Vec::new(),
        pending_heading: Vec::new(),
    };
    // Document header.
    body.block(vec![
        right_aligned(
            "Internet Engineering Task Force (IETF)",
            &format!("{initial}. {surname}, Ed."),
        ),
        right_aligned(&format!("Request for Comments: {number}"), "Example Corp"),
        right_aligned("Category: Standards Track", &date),
        "ISSN: 2070-1721".into(),
        String::new(),
        String::new(),
        format!("{}{title}", " ".repeat((72 - title.len()) / 2)),
    ]);
    body.heading("Abstract".into());
    let mut ignored = Vec::new();
    body.block(wrap(
        &format!(
            "This document specifies {}, a protocol for {} over {}. {}",
            title.trim_start_matches("The "),
            rng.pick(TOPICS),
            rng.pick(TOPICS),
            paragraph(rng, 2, 0.0, &mut ignored)
        ),
        "   ",
        "   ",
    ));
    body.heading("Status of This Memo".into());
    body.block(wrap(
        "This is an Internet Standards Track document. This document is a product of the Internet Engineering Task Force (IETF). It represents the consensus of the IETF community.",
        "   ",
        "   ",
    ));
    body.block(wrap(
        &format!(
            "Information about the current status of this document, any errata, and how to provide feedback on it may be obtained at https://www.rfc-editor.org/info/rfc{number}."
        ),
        "   ",
        "   ",
    ));
    body.heading("Copyright Notice".into());
    body.block(wrap(
        "Copyright (c) 2024 IETF Trust and the persons identified as the document authors. All rights reserved.",
        "   ",
        "   ",
    ));

    let plan = plan_sections(rng);
    // Table of contents (page numbers are estimates).
    body.heading("Table of Contents".into());
    let mut toc = Vec::new();
    for (i, s) in plan.iter().enumerate() {
        let depth = s.id.matches('.').count();
        let entry = format!("{}{}.  {} ", "  ".repeat(depth + 1) + " ", s.id, s.title);
        let page = format!("{:>3}", 3 + i * 2 / 3);
        let mut line = entry;
        if line.len() % 2 == 1 {
            line.push(' ');
        }
        while line.len() < 66 {
            line.push_str(". ");
        }
        line.push_str(&page);
        toc.push(line);
    }
    body.lines(toc);

    let mut requirements = Vec::new();
    let mut figures = 0;
    for s in &plan {
        body.heading(format!("{}.  {}", s.id, s.title));
        let section = format!("section-{}", s.id);
        let mut reqs = Vec::new();
        match s.kind {
            SectionKind::Intro => {
                for _ in 0..rng.range(2, 3) {
                    let n = rng.range(3, 5);
                    body.block(wrap(&paragraph(rng, n, 0.0, &mut reqs), "   ", "   "));
                }
            }
            SectionKind::Conventions => {
                body.block(wrap(BCP14, "   ", "   "));
            }
            SectionKind::Terminology => {
                body.block(wrap(
                    "This document uses the following terms:",
                    "   ",
                    "   ",
                ));
                for actor in ACTORS.iter().take(rng.range(3, 6)) {
                    let definition = format!(
                        "{}:  An entity that takes part in {} and handles {}.",
                        capitalize(actor),
                        rng.pick(TOPICS),
                        plural(rng.pick(OBJECTS))
                    );
                    body.block(wrap(&definition, "   ", "      "));
                }
            }
            SectionKind::Body { has_children } => {
                let paragraphs = if has_children {
                    rng.range(1, 2)
                } else {
                    rng.range(2, 6)
                };
                for p in 0..paragraphs {
                    if p > 0 && rng.chance(0.12) {
                        // A bullet list, one sentence per item.
                        body.block(wrap(
                            &format!(
                                "The following rules apply to {}:",
                                plural(rng.pick(OBJECTS))
                            ),
                            "   ",
                            "   ",
                        ));
                        for _ in 0..rng.range(2, 4) {
                            let item = paragraph(rng, 1, 0.6, &mut reqs);
                            body.block(wrap(&item, "   *  ", "      "));
                        }
                    } else if p > 0 && rng.chance(0.1) {
                        figures += 1;
                        body.block(figure(rng, figures));
                    } else {
                        let n = rng.range(2, 6);
                        body.block(wrap(&paragraph(rng, n, 0.38, &mut reqs), "   ", "   "));
                    }
                }
            }
            SectionKind::Security => {
                for _ in 0..rng.range(2, 4) {
                    let n = rng.range(3, 5);
                    body.block(wrap(&paragraph(rng, n, 0.3, &mut reqs), "   ", "   "));
                }
            }
            SectionKind::Iana => {
                body.block(wrap(
                    &format!(
                        "This document registers {} new entries in the \"{} Parameters\" registry.",
                        rng.range(2, 9),
                        short
                    ),
                    "   ",
                    "   ",
                ));
            }
            SectionKind::References => {}
            SectionKind::ReferenceList { normative } => {
                let refs: &[(usize, &str)] = if normative {
                    &[
                        (
                            2119,
                            "Key words for use in RFCs to Indicate Requirement Levels",
                        ),
                        (
                            8174,
                            "Ambiguity of Uppercase vs Lowercase in RFC 2119 Key Words",
                        ),
                        (9000, "QUIC: A UDP-Based Multiplexed and Secure Transport"),
                    ]
                } else {
                    &[
                        (9002, "QUIC Loss Detection and Congestion Control"),
                        (9114, "HTTP/3"),
                    ]
                };
                for (n, t) in refs {
                    let entry = format!(
                        "Example, A. and B. Sample, \"{t}\", RFC {n}, DOI 10.17487/RFC{n}, <https://www.rfc-editor.org/info/rfc{n}>."
                    );
                    let label = format!("[RFC{n}]");
                    let first = format!("   {label:<11}");
                    body.block(wrap(&entry, &first, "              "));
                }
            }
        }
        requirements.extend(reqs.into_iter().map(|text| Req {
            spec: index,
            section: section.clone(),
            text,
        }));
    }
    body.heading("Acknowledgments".into());
    body.block(wrap(
        &format!(
            "The authors thank the members of the working group for their reviews of {}.",
            short
        ),
        "   ",
        "   ",
    ));
    body.heading("Author's Address".into());
    body.block(vec![
        format!("   {initial}. {surname} (editor)"),
        "   Example Corp".into(),
        format!("   Email: {}@example.com", surname.to_ascii_lowercase()),
    ]);

    // Pages of at most ~50 lines: page footers, form feeds and running headers.
    let mut text = String::new();
    let mut page = 1;
    let mut page_lines = 0;
    let footer = |page: usize| right_aligned_footer(surname, page);
    let header = columns(&format!("RFC {number}"), &short, &date);
    for block in body.blocks {
        if page_lines > 0 && page_lines + block.len() > 48 {
            while page_lines < 52 {
                text.push('\n');
                page_lines += 1;
            }
            write!(text, "{}\n\u{c}\n{header}\n\n\n", footer(page)).unwrap();
            page += 1;
            page_lines = 0;
        }
        for line in &block {
            text.push_str(line);
            text.push('\n');
        }
        page_lines += block.len();
    }
    while page_lines < 52 {
        text.push('\n');
        page_lines += 1;
    }
    writeln!(text, "{}", footer(page)).unwrap();
    SpecDoc {
        number,
        url,
        text,
        sections: plan.len(),
        requirements,
    }
}

fn right_aligned_footer(surname: &str, page: usize) -> String {
    columns(surname, "Standards Track", &format!("[Page {page}]"))
}

// ---- sources and annotations ----------------------------------------------------------------

const AREAS: &[&str] = &[
    "transport",
    "stream",
    "frame",
    "packet",
    "crypto",
    "recovery",
    "congestion",
    "connection",
    "path",
    "handshake",
    "tls",
    "qpack",
    "http",
    "datagram",
    "token",
    "server",
    "client",
    "endpoint",
    "config",
    "io",
];

const MODULE_WORDS: &[&str] = &[
    "state",
    "limits",
    "encoder",
    "decoder",
    "buffer",
    "timer",
    "manager",
    "handler",
    "parser",
    "writer",
    "reader",
    "window",
    "queue",
    "registry",
    "tracker",
    "validator",
    "scheduler",
    "builder",
    "events",
    "metrics",
    "policy",
];

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Implementation,
    /// In `tests/` (type from the `[[source]]` entry).
    Test,
    /// `//= type=test` in a `src/` file.
    InlineTest,
}

/// An annotation planned for a source file.
struct Planned {
    kind: Kind,
    req: usize,
}

/// A citation as written, with where it is.
#[derive(Clone)]
struct Written {
    file: String,
    line: usize,
    /// The `//=`/`//#` lines, unindented.
    citation: String,
    kind: Kind,
}

/// The quote of a citation of `text`: whole (70%), part (25%) or with odd whitespace (5%).
fn quote_of(rng: &mut Rng, text: &str, stats: &mut QuoteStats) -> String {
    let words: Vec<&str> = text.split(' ').collect();
    let roll = rng.below(100);
    if roll < 70 || words.len() < 8 {
        stats.whole += 1;
        return text.to_string();
    }
    if roll < 95 {
        stats.partial += 1;
        // A run of words including the first keyword.
        let kw = words
            .iter()
            .position(|w| {
                matches!(
                    *w,
                    "MUST" | "SHOULD" | "MAY" | "SHALL" | "RECOMMENDED" | "REQUIRED"
                )
            })
            .unwrap_or(0);
        let start = if rng.chance(0.6) { 0 } else { rng.range(0, kw) };
        let min_end = (kw + 2).max(start + 5);
        if min_end < words.len() {
            let end = rng.range(min_end, words.len() - 1);
            return words[start..end].join(" ");
        }
        return words[start..].join(" ");
    }
    stats.whitespace += 1;
    // Two spaces, and a line break that does not follow the spec's wrapping.
    let at = rng.range(1, words.len() - 2);
    let mut quote = words[..at].join(" ");
    quote.push_str("  ");
    quote.push_str(&words[at..].join(" "));
    quote.replacen(' ', "\n", 1)
}

#[derive(Default)]
struct QuoteStats {
    whole: usize,
    partial: usize,
    whitespace: usize,
}

/// The `//=`/`//#` lines of a citation of `req` with `quote`.
fn citation_lines(req: &Req, quote: &str, kind: Kind) -> Vec<String> {
    let mut lines = vec![format!(
        "//= {BASE_URL}{}#{}",
        7_900 + 53 * req.spec,
        req.section
    )];
    if kind == Kind::InlineTest {
        lines.push("//= type=test".into());
    }
    for part in quote.split('\n') {
        // Rewrapped at 76 columns (not the spec's wrapping); double spaces survive.
        let mut line = String::from("//#");
        for word in part.split(' ') {
            if line.len() > 3 && line.len() + 1 + word.len() > 76 {
                lines.push(std::mem::replace(&mut line, String::from("//#")));
            }
            line.push(' ');
            line.push_str(word);
        }
        lines.push(line);
    }
    lines
}

fn snake(s: &str) -> String {
    s.to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

fn camel(s: &str) -> String {
    s.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| capitalize(&w.to_ascii_lowercase()))
        .collect()
}

/// Plain code: a function of 5–12 lines.
fn code_fn(rng: &mut Rng, name: &str, indent: &str, out: &mut Vec<String>) {
    let ty = camel(rng.pick(OBJECTS));
    out.push(format!(
        "{indent}pub fn {name}(state: &mut State, input: &{ty}) -> Result<(), Error> {{"
    ));
    for _ in 0..rng.range(2, 8) {
        let field = snake(rng.pick(FIELDS));
        let line = match rng.below(5) {
            0 => format!("    let {field} = input.{field}();"),
            1 => format!(
                "    if state.{field} > input.{field}() {{ return Err(Error::{}); }}",
                camel(rng.pick(ERRORS))
            ),
            2 => format!("    state.{field} = state.{field}.saturating_add(1);"),
            3 => format!("    state.events.push(Event::{ty}Seen);"),
            _ => format!("    debug_assert!(state.{field} <= LIMIT);"),
        };
        out.push(format!("{indent}{line}"));
    }
    out.push(format!("{indent}    Ok(())"));
    out.push(format!("{indent}}}"));
    out.push(String::new());
}

struct Project {
    _dir: tempfile::TempDir,
    root: PathBuf,
    specs: Vec<SpecDoc>,
    reqs: Vec<Req>,
    written: Vec<Written>,
    quote_stats: QuoteStats,
    source_bytes: usize,
    generated_in: Duration,
}

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn generate_project() -> Project {
    let started = Instant::now();
    let dir = tempfile::tempdir().expect("create a temp dir");
    let root = dir.path().join("project");
    let mut rng = Rng(0x00D0_0E7B_E4C8);

    let specs: Vec<SpecDoc> = (0..SPECS).map(|i| generate_spec(i, &mut rng)).collect();
    let mut config = String::from(
        "'$schema' = \"https://awslabs.github.io/duvet/config/v0.4.0.json\"\n\n\
         [[source]]\npattern = \"src/**/*.rs\"\n\n\
         [[source]]\npattern = \"tests/**/*.rs\"\ntype = \"test\"\n\n",
    );
    for spec in &specs {
        writeln!(config, "[[specification]]\nsource = \"{}\"\n", spec.url).unwrap();
        write(
            &root,
            &format!(
                ".duvet/specifications/www.rfc-editor.org/rfc/rfc{}.txt",
                spec.number
            ),
            &spec.text,
        );
    }
    config.push_str("[report.html]\nenabled = false\n");
    write(&root, ".duvet/config.toml", &config);
    let reqs: Vec<Req> = specs
        .iter()
        .flat_map(|s| s.requirements.iter().cloned())
        .collect();
    let spec_first: Vec<usize> = specs
        .iter()
        .scan(0, |acc, s| {
            let first = *acc;
            *acc += s.requirements.len();
            Some(first)
        })
        .collect();
    // Earlier specifications are implemented more (min of two uniform picks).
    let pick_req = |rng: &mut Rng| {
        let s = rng.below(SPECS).min(rng.below(SPECS));
        spec_first[s] + rng.below(specs[s].requirements.len())
    };

    // Plan the source annotations.
    let mut src_plan: Vec<Vec<Planned>> = (0..SRC_FILES).map(|_| Vec::new()).collect();
    let mut test_plan: Vec<Vec<Planned>> = (0..TEST_FILES).map(|_| Vec::new()).collect();
    let mut implemented = Vec::new();
    for _ in 0..IMPL_CITATIONS {
        let req = pick_req(&mut rng);
        implemented.push(req);
        src_plan[rng.below(ANNOTATED_SRC_FILES)].push(Planned {
            kind: Kind::Implementation,
            req,
        });
    }
    let tested = |rng: &mut Rng| {
        if rng.chance(0.7) {
            rng.pick(&implemented)
        } else {
            pick_req(rng)
        }
    };
    for _ in 0..TEST_CITATIONS {
        let req = tested(&mut rng);
        test_plan[rng.below(TEST_FILES)].push(Planned {
            kind: Kind::Test,
            req,
        });
    }
    for _ in 0..INLINE_TEST_CITATIONS {
        let req = tested(&mut rng);
        src_plan[rng.below(ANNOTATED_SRC_FILES)].push(Planned {
            kind: Kind::InlineTest,
            req,
        });
    }

    let mut written = Vec::new();
    let mut quote_stats = QuoteStats::default();
    let mut source_bytes = 0;
    for (i, plan) in src_plan.iter().enumerate() {
        let area = AREAS[i % AREAS.len()];
        let module = format!(
            "{}_{}",
            MODULE_WORDS[(i / AREAS.len()) % MODULE_WORDS.len()],
            i
        );
        let rel = format!("src/{area}/{module}.rs");
        let mut lines = vec![
            format!(
                "//! The {} {} of the {area} layer.",
                module.replace('_', " "),
                area
            ),
            String::new(),
            "use crate::{error::Error, event::Event, state::State};".into(),
            format!("use crate::{area}::types::*;"),
            String::new(),
            "const LIMIT: u64 = 1 << 62;".into(),
            String::new(),
        ];
        let mut n = 0;
        for p in plan.iter().filter(|p| p.kind == Kind::Implementation) {
            for _ in 0..rng.range(0, 2) {
                n += 1;
                code_fn(&mut rng, &format!("helper_{n}"), "", &mut lines);
            }
            let quote = quote_of(&mut rng, &reqs[p.req].text, &mut quote_stats);
            let citation = citation_lines(&reqs[p.req], &quote, p.kind);
            let inside = rng.chance(0.3);
            n += 1;
            if inside {
                // In the body of a function, indented.
                lines.push(format!(
                    "pub fn on_{}_{n}(state: &mut State) -> Result<(), Error> {{",
                    snake(rng.pick(OBJECTS))
                ));
                lines.push("    let limit = state.limit();".into());
                written.push(Written {
                    file: rel.clone(),
                    line: lines.len() + 1,
                    citation: citation.join("\n"),
                    kind: p.kind,
                });
                lines.extend(citation.iter().map(|l| format!("    {l}")));
                lines.push("    state.check(limit)?;".into());
                lines.push("    Ok(())".into());
                lines.push("}".into());
                lines.push(String::new());
            } else {
                lines.push(format!(
                    "/// Handles {} {}.",
                    with_article(rng.pick(OBJECTS)),
                    rng.pick(CONDITIONS)
                ));
                written.push(Written {
                    file: rel.clone(),
                    line: lines.len() + 1,
                    citation: citation.join("\n"),
                    kind: p.kind,
                });
                lines.extend(citation);
                code_fn(&mut rng, &format!("handle_{n}"), "", &mut lines);
            }
        }
        for _ in 0..rng.range(1, 4) {
            n += 1;
            code_fn(&mut rng, &format!("process_{n}"), "", &mut lines);
        }
        let inline: Vec<&Planned> = plan.iter().filter(|p| p.kind == Kind::InlineTest).collect();
        if !inline.is_empty() {
            lines.push("#[cfg(test)]".into());
            lines.push("mod tests {".into());
            lines.push("    use super::*;".into());
            lines.push(String::new());
            for p in inline {
                n += 1;
                lines.push("    #[test]".into());
                lines.push(format!("    fn checks_requirement_{n}() {{"));
                let quote = quote_of(&mut rng, &reqs[p.req].text, &mut quote_stats);
                let citation = citation_lines(&reqs[p.req], &quote, p.kind);
                written.push(Written {
                    file: rel.clone(),
                    line: lines.len() + 1,
                    citation: citation.join("\n"),
                    kind: p.kind,
                });
                lines.extend(citation.iter().map(|l| format!("        {l}")));
                lines.push("        let mut state = State::default();".into());
                lines.push(format!(
                    "        assert!(handle_{n}_case(&mut state).is_ok());"
                ));
                lines.push("    }".into());
                lines.push(String::new());
            }
            lines.push("}".into());
        }
        let text = lines.join("\n") + "\n";
        source_bytes += text.len();
        write(&root, &rel, &text);
    }
    for (i, plan) in test_plan.iter().enumerate() {
        let area = AREAS[i % AREAS.len()];
        let rel = format!(
            "tests/{area}_{}_{i}.rs",
            MODULE_WORDS[i % MODULE_WORDS.len()]
        );
        let mut lines = vec![
            format!("//! Conformance tests of the {area} layer."),
            String::new(),
            format!("use example::{area}::*;"),
            String::new(),
        ];
        for (n, p) in plan.iter().enumerate() {
            lines.push("#[test]".into());
            lines.push(format!("fn {}_{n}() {{", snake(rng.pick(OBJECTS))));
            lines.push("    let mut conn = Connection::test_pair();".into());
            let quote = quote_of(&mut rng, &reqs[p.req].text, &mut quote_stats);
            let citation = citation_lines(&reqs[p.req], &quote, p.kind);
            written.push(Written {
                file: rel.clone(),
                line: lines.len() + 1,
                citation: citation.join("\n"),
                kind: p.kind,
            });
            lines.extend(citation.iter().map(|l| format!("    {l}")));
            lines.push(format!(
                "    conn.deliver(Frame::{}(Default::default()));",
                camel(rng.pick(OBJECTS))
            ));
            lines.push("    assert!(conn.is_open());".into());
            lines.push("}".into());
            lines.push(String::new());
        }
        if plan.is_empty() {
            lines.push("#[test]".into());
            lines.push("fn smoke() {".into());
            lines.push("    assert!(Connection::test_pair().is_open());".into());
            lines.push("}".into());
        }
        let text = lines.join("\n") + "\n";
        source_bytes += text.len();
        write(&root, &rel, &text);
    }

    // TODO and exception entries, grouped by section into TOML files.
    for (dir, count, table) in [
        ("todos", TODOS, "TODO"),
        ("exceptions", EXCEPTIONS, "exception"),
    ] {
        let mut by_section: BTreeMap<(usize, String), Vec<usize>> = BTreeMap::new();
        for _ in 0..count {
            let r = pick_req(&mut rng);
            by_section
                .entry((reqs[r].spec, reqs[r].section.clone()))
                .or_default()
                .push(r);
        }
        for ((spec, section), entries) in by_section {
            let number = 7_900 + 53 * spec;
            let mut text = format!("target = \"{BASE_URL}{number}#{section}\"\n");
            for r in entries {
                let quote = wrap(&reqs[r].text, "", "").join("\n");
                write!(text, "\n[[{table}]]\nquote = '''\n{quote}\n'''\n").unwrap();
                if table == "TODO" {
                    writeln!(
                        text,
                        "feature = \"{}\"\ntracking-issue = \"{}\"",
                        snake(rng.pick(TOPICS)).replace('_', "-"),
                        1_000 + rng.below(9_000)
                    )
                    .unwrap();
                } else {
                    writeln!(
                        text,
                        "reason = '''\nNot applicable: this implementation does not {} {} {}.\n'''",
                        rng.pick(VERBS).0,
                        plural(rng.pick(OBJECTS)),
                        rng.pick(CONDITIONS)
                    )
                    .unwrap();
                }
            }
            write(
                &root,
                &format!(".duvet/{dir}/rfc{number}-{section}.toml"),
                &text,
            );
        }
    }

    Project {
        _dir: dir,
        root,
        specs,
        reqs,
        written,
        quote_stats,
        source_bytes,
        generated_in: started.elapsed(),
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

// ---- the server ---------------------------------------------------------------------------

/// The release binary `cargo bench` built for this benchmark (built here when it is missing).
fn server_binary() -> PathBuf {
    bench::release_binary(option_env!("CARGO_BIN_EXE_duvet"), "duvet", "duvet")
}

async fn start(bin: &Path, root: &Path, args: &[&str]) -> McpProcess {
    let mut all = vec!["mcp"];
    all.extend_from_slice(args);
    McpProcess::spawn_bin(bin, &all, root, &[("HOME", "/nonexistent")])
        .await
        .expect("start duvet mcp")
}

/// The `project analysed` log line's fields (`-v`).
fn analysed(stderr: &str) -> Option<(u64, u64, u64)> {
    let line = stderr.lines().find(|l| l.contains("project analysed"))?;
    let field = |name: &str| {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{name}=")))
            .and_then(|v| v.trim_matches(|c: char| !c.is_ascii_digit()).parse().ok())
    };
    Some((
        field("elapsed_ms")?,
        field("requirements")?,
        field("citations")?,
    ))
}

// ---- the cases ------------------------------------------------------------------------------

/// Realistic arguments for the tools, from the generated project.
struct Samples {
    citations: Vec<String>,
    contexts: Vec<String>,
    identifiers: Vec<String>,
    urls: Vec<String>,
    queries: Vec<&'static str>,
}

fn samples(project: &Project) -> Samples {
    let mut rng = Rng(42);
    let impls: Vec<&Written> = project
        .written
        .iter()
        .filter(|w| w.kind == Kind::Implementation)
        .collect();
    let citations = (0..64).map(|_| rng.pick(&impls).citation.clone()).collect();
    let contexts = (0..64)
        .map(|_| {
            let w = &project.written[rng.below(project.written.len())];
            format!("{}:{}", w.file, w.line)
        })
        .collect();
    let identifiers = (0..64)
        .map(|_| {
            let r = &project.reqs[rng.below(project.reqs.len())];
            let spec = duvet::model::source_key(&project.specs[r.spec].url);
            duvet::model::requirement_identifier(&format!("{spec}#{}", r.section), &r.text)
        })
        .collect();
    let urls = project
        .specs
        .iter()
        .enumerate()
        .map(|(i, s)| {
            if i % 3 == 0 {
                format!("{}#section-2", s.url)
            } else {
                s.url.clone()
            }
        })
        .collect();
    Samples {
        citations,
        contexts,
        identifiers,
        urls,
        queries: vec![
            "flow control",
            "stream frame",
            "connection error",
            "handshake",
            "congestion window",
            "key update",
            "path validation",
            "retransmit packet",
        ],
    }
}

const TOOLS: [&str; 11] = [
    "validate_citation",
    "search_requirements",
    "get_requirement_status",
    "list_uncited_requirements",
    "list_invalid_citations",
    "get_citation_context",
    "resolve_spec_id",
    "get_prioritized_requirements",
    "list_untested_citations",
    "list_duplicate_citations",
    "list_unattached_citations",
];

fn args_for(tool: &str, i: usize, s: &Samples) -> Value {
    match tool {
        "validate_citation" => json!({"citation": s.citations[i % s.citations.len()]}),
        "search_requirements" => json!({"query": s.queries[i % s.queries.len()]}),
        "get_requirement_status" => {
            json!({"req_identifier": s.identifiers[i % s.identifiers.len()]})
        }
        "get_citation_context" => json!({"citation_id": s.contexts[i % s.contexts.len()]}),
        "resolve_spec_id" => json!({"url": s.urls[i % s.urls.len()]}),
        _ => json!({}),
    }
}

/// Checks that the answer is the real one (not an empty or degraded answer).
fn check(tool: &str, i: usize, s: &Samples, data: &Value) {
    match tool {
        "validate_citation" => assert_eq!(data["valid"], true, "{data}"),
        "search_requirements" => {
            let found = data.as_array().unwrap();
            assert!(
                !found.is_empty(),
                "no match for {}",
                s.queries[i % s.queries.len()]
            );
        }
        "get_requirement_status" => {
            assert_eq!(data["identifier"], s.identifiers[i % s.identifiers.len()]);
        }
        "list_uncited_requirements"
        | "get_prioritized_requirements"
        | "list_untested_citations"
        | "list_duplicate_citations" => {
            assert_eq!(data.as_array().unwrap().len(), 100, "a full default page");
        }
        "list_invalid_citations" | "list_unattached_citations" => {
            assert!(data.as_array().unwrap().is_empty(), "invalid: {data:#}");
        }
        "get_citation_context" => {
            let context = data["context"].as_array().unwrap();
            let line = data["line_number"].as_u64().unwrap() - data["first_line"].as_u64().unwrap();
            let at = context[line as usize].as_str().unwrap();
            assert!(at.trim_start().starts_with("//= https://"), "{data}");
        }
        "resolve_spec_id" => assert!(
            data["spec_id"].as_str().unwrap().starts_with("rfc"),
            "{data}"
        ),
        _ => {}
    }
}

// ---- statistics and formatting --------------------------------------------------------------

/// The cells `p50 | min | max` of a Markdown table row, for `samples` (not empty) shown by
/// `show`.
fn p50_min_max<T: Ord + Copy>(samples: &[T], show: impl Fn(T) -> String) -> String {
    let min = *samples.iter().min().unwrap();
    let max = *samples.iter().max().unwrap();
    format!(
        "{} | {} | {}",
        show(percentile(samples, 0.5)),
        show(min),
        show(max)
    )
}

/// Milliseconds counted by the server, for [`p50_min_max`].
fn whole_ms(v: u64) -> String {
    format!("{v} ms")
}

// ---- the peer -------------------------------------------------------------------------------

struct PeerRun {
    wall: Duration,
    /// Peak RSS in KiB.
    peak_kb: Option<u64>,
    status: String,
    success: bool,
    stderr: String,
}

struct Peer {
    path: PathBuf,
    version: String,
    /// The first run in the fresh copy: it creates `.duvet/requirements` (1,000+ files).
    first: PeerRun,
    /// The measured runs, in the same copy (`.duvet/requirements` exists, as in a real
    /// project, where it is committed).
    runs: Vec<PeerRun>,
    method: &'static str,
    /// The copy the peer ran in (with the requirement files it wrote).
    copy: tempfile::TempDir,
}

impl Peer {
    fn root(&self) -> PathBuf {
        self.copy.path().join("project")
    }
}

fn peer_binary() -> Result<(PathBuf, String), String> {
    let path = std::env::var_os("DUVET_PEER")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(DEFAULT_PEER));
    if !path.is_file() {
        let log = std::fs::read_to_string("/tmp/duvet-peer-install.log")
            .ok()
            .and_then(|l| l.lines().last().map(str::to_string))
            .unwrap_or_default();
        return Err(format!(
            "{} does not exist (install it with `cargo install duvet --version 0.4.3 --root /tmp/duvet-peer`, or set DUVET_PEER){}",
            path.display(),
            if log.is_empty() {
                String::new()
            } else {
                format!(
                    "; last line of /tmp/duvet-peer-install.log: \"{}\"",
                    log.trim().replace('`', "'")
                )
            }
        ));
    }
    // `duvet` has no `--version`; `cargo install` records what it installed.
    let version = path
        .parent()
        .and_then(Path::parent)
        .and_then(|root| std::fs::read_to_string(root.join(".crates.toml")).ok())
        .and_then(|toml| {
            toml.lines()
                .find_map(|l| l.trim().strip_prefix("\"duvet "))
                .and_then(|rest| rest.split_whitespace().next())
                .map(|v| format!("duvet {v}"))
        })
        .unwrap_or_else(|| "version unknown".to_string());
    Ok((path, version))
}

/// The children of `pid` (to stop the peer under `/usr/bin/time` on a timeout).
fn children(pid: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// One `duvet report` in `root`; `scratch` holds its stderr and `/usr/bin/time` output.
fn run_peer_once(bin: &Path, root: &Path, scratch: &Path) -> PeerRun {
    let time_bin = Path::new("/usr/bin/time");
    let time_out = scratch.join("time.txt");
    let stderr_file = scratch.join("stderr.txt");
    let mut command = if time_bin.is_file() {
        let mut c = Command::new(time_bin);
        c.arg("-f").arg("%M").arg("-o").arg(&time_out).arg(bin);
        c
    } else {
        Command::new(bin)
    };
    command
        .arg("report")
        .current_dir(root)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", scratch)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(std::fs::File::create(&stderr_file).unwrap()));
    let start = Instant::now();
    let mut child = command.spawn().expect("spawn the peer");
    let pid = child.id();
    let mut polled_peak = 0;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if start.elapsed() > PEER_TIMEOUT {
            // Stop the peer (under /usr/bin/time, its child) by pid, then the wrapper.
            for c in children(pid) {
                let _ = Command::new("kill").arg("-9").arg(c.to_string()).status();
            }
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        // Without /usr/bin/time: poll the high-water mark of the process itself.
        if !time_bin.is_file()
            && let Some(m) = read_memory(pid)
        {
            polled_peak = polled_peak.max(m.peak);
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let wall = start.elapsed();
    let stderr = std::fs::read_to_string(&stderr_file).unwrap_or_default();
    let peak_kb = if time_bin.is_file() {
        std::fs::read_to_string(&time_out)
            .ok()
            .and_then(|t| t.lines().last().and_then(|l| l.trim().parse().ok()))
    } else {
        (polled_peak > 0).then_some(polled_peak)
    };
    let (status, success) = match status {
        Some(s) => (
            s.code()
                .map_or_else(|| format!("{s}"), |c| format!("exit {c}")),
            s.success(),
        ),
        None => (format!("timed out after {PEER_TIMEOUT:?}"), false),
    };
    PeerRun {
        wall,
        peak_kb,
        status,
        success,
        stderr,
    }
}

fn run_peer(project: &Path) -> Result<Peer, String> {
    let (path, version) = peer_binary()?;
    let method = if Path::new("/usr/bin/time").is_file() {
        "`/usr/bin/time -f %M` (max RSS)"
    } else {
        "VmHWM polled every 2 ms from /proc"
    };
    let copy = tempfile::tempdir().unwrap();
    let root = copy.path().join("project");
    copy_dir(project, &root);
    let first = run_peer_once(&path, &root, copy.path());
    eprintln!(
        "peer first run (fresh copy): {} in {:.2?}, peak {:?} KiB",
        first.status, first.wall, first.peak_kb
    );
    let mut runs = Vec::new();
    if first.success {
        for i in 0..PEER_RUNS {
            let run = run_peer_once(&path, &root, copy.path());
            eprintln!(
                "peer run {}: {} in {:.2?}, peak {:?} KiB",
                i + 1,
                run.status,
                run.wall,
                run.peak_kb
            );
            let failed = !run.success;
            runs.push(run);
            if failed {
                break;
            }
        }
    }
    Ok(Peer {
        path,
        version,
        first,
        runs,
        method,
        copy,
    })
}

// ---- duvet report: ours against the peer's, and HTML against JSON ------------------------

/// Runs of each command in [`report_runs`] (after one unmeasured run of each).
const REPORT_RUNS: usize = 10;
/// Target: our `duvet report --json` in at most this share of the peer's time.
const REPORT_TARGET: f64 = 0.25;
/// Target: our HTML report in at most this multiple of our JSON report's time.
const HTML_TARGET: f64 = 2.0;

/// One `duvet report ARGS` in `root` (output thrown away): its wall time, or why it failed.
fn timed_report(bin: &Path, root: &Path, args: &[&str]) -> Result<Duration, String> {
    let start = Instant::now();
    let out = Command::new(bin)
        .arg("report")
        .args(args)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("{}: {e}", bin.display()))?;
    let wall = start.elapsed();
    if out.status.success() {
        Ok(wall)
    } else {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
        Err(format!(
            "`{} report {}` failed ({}): {}",
            bin.display(),
            args.join(" "),
            out.status,
            tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
        ))
    }
}

/// Pairs of (A, B) wall times, A and B run in turn, after one unmeasured run of each.
fn paired(
    a: impl Fn() -> Result<Duration, String>,
    b: impl Fn() -> Result<Duration, String>,
) -> Result<Vec<(Duration, Duration)>, String> {
    a()?;
    b()?;
    (0..REPORT_RUNS).map(|_| Ok((a()?, b()?))).collect()
}

struct ReportRuns {
    /// Where they ran: the peer's copy, or a copy of our own.
    place: &'static str,
    /// (ours, peer's) `duvet report --json`, when the peer ran.
    vs_peer: Option<Result<Vec<(Duration, Duration)>, String>>,
    /// Whether the two JSON files were the same bytes.
    same_json: Option<bool>,
    /// (our `--html`, our `--json`).
    html_vs_json: Result<Vec<(Duration, Duration)>, String>,
}

fn report_runs(bin: &Path, project: &Path, peer: &Result<Peer, String>) -> ReportRuns {
    let scratch = tempfile::tempdir().unwrap();
    let ours_json = scratch.path().join("ours.json");
    let ours_html = scratch.path().join("ours.html");
    let peer_json = scratch.path().join("peer.json");
    let (root, place, peer_bin) = match peer {
        Ok(peer) if peer.first.success => (peer.root(), "the peer's copy", Some(&peer.path)),
        _ => {
            let root = scratch.path().join("project");
            copy_dir(project, &root);
            (root, "a copy of the project", None)
        }
    };
    let json = ["--json", ours_json.to_str().unwrap()];
    let html = ["--html", ours_html.to_str().unwrap()];
    let ours = |args: &[&str]| timed_report(bin, &root, args);
    let vs_peer = peer_bin.map(|peer_bin| {
        paired(
            || ours(&json),
            || timed_report(peer_bin, &root, &["--json", peer_json.to_str().unwrap()]),
        )
    });
    let same_json = matches!(vs_peer, Some(Ok(_))).then(|| {
        std::fs::read(&ours_json).ok().is_some_and(|ours| {
            std::fs::read(&peer_json)
                .ok()
                .is_some_and(|peer| ours == peer)
        })
    });
    let html_vs_json = paired(|| ours(&html), || ours(&json));
    ReportRuns {
        place,
        vs_peer,
        same_json,
        html_vs_json,
    }
}

/// The medians of A and B, the ratio of the medians and the median of the pairs' ratios.
fn ratios(pairs: &[(Duration, Duration)]) -> (Duration, Duration, f64, f64) {
    let a: Vec<Duration> = pairs.iter().map(|p| p.0).collect();
    let b: Vec<Duration> = pairs.iter().map(|p| p.1).collect();
    let (a50, b50) = (percentile(&a, 0.5), percentile(&b, 0.5));
    let mut each: Vec<f64> = pairs
        .iter()
        .map(|(a, b)| a.as_secs_f64() / b.as_secs_f64())
        .collect();
    each.sort_by(f64::total_cmp);
    let median = each
        .get(each.len().saturating_sub(1) / 2)
        .copied()
        .unwrap_or(f64::NAN);
    (a50, b50, a50.as_secs_f64() / b50.as_secs_f64(), median)
}

fn report_section(out: &mut String, runs: &ReportRuns) {
    writeln!(
        out,
        "### `duvet report`: ours against the peer's, HTML against JSON\n"
    )
    .unwrap();
    writeln!(
        out,
        "In {}, where `.duvet/requirements` exists; each command run {REPORT_RUNS} times after \
         one unmeasured run, in turn with the one it is compared with (pairs keep the ratio \
         meaningful when the machine's speed drifts). Wall time of the whole process.\n",
        runs.place
    )
    .unwrap();
    writeln!(
        out,
        "| A / B | A p50 | B p50 | ratio of p50s | p50 of the pairs' ratios | target |\n\
         |---|---:|---:|---:|---:|---|"
    )
    .unwrap();
    let mut row =
        |label: &str, pairs: &Result<Vec<(Duration, Duration)>, String>, target: f64| match pairs {
            Ok(pairs) => {
                let (a, b, ratio, median) = ratios(pairs);
                writeln!(
                    out,
                    "| {label} | {} | {} | {ratio:.2} | {median:.2} | ≤ {target}: {} |",
                    ms_scaled(a),
                    ms_scaled(b),
                    met(median <= target)
                )
                .unwrap();
            }
            Err(reason) => writeln!(out, "| {label} | failed: {reason} | | | | |").unwrap(),
        };
    let skipped = Err("peer skipped".to_string());
    row(
        "ours `--json` / the peer's `--json`",
        runs.vs_peer.as_ref().unwrap_or(&skipped),
        REPORT_TARGET,
    );
    row(
        "our `--html` / our `--json`",
        &runs.html_vs_json,
        HTML_TARGET,
    );
    if let Some(same) = runs.same_json {
        writeln!(
            out,
            "\nThe two JSON reports are {}.\n",
            if same {
                "the same bytes"
            } else {
                "**not** the same bytes"
            }
        )
        .unwrap();
    } else {
        writeln!(out).unwrap();
    }
}

// ---- main -----------------------------------------------------------------------------------

struct Cold {
    total: Duration,
    /// `elapsed_ms`, `requirements`, `citations` of the `project analysed` line.
    counts: Option<(u64, u64, u64)>,
    initialize: Duration,
    analysis_ms: Option<u64>,
    peak_kb: Option<u64>,
}

struct Warm {
    rows: Vec<(String, Duration, Duration, usize)>,
    pings: Vec<Duration>,
    first_call: Duration,
    mem_after_first: Option<Memory>,
    mem_after: Option<Memory>,
}

fn main() {
    let started = Instant::now();
    let bin = server_binary();
    let project = generate_project();
    let sizes: Vec<usize> = project.specs.iter().map(|s| s.text.len()).collect();
    eprintln!(
        "project generated in {:.1?}: {} specs ({}–{} bytes), {} requirement sentences, {} annotations",
        project.generated_in,
        project.specs.len(),
        sizes.iter().min().unwrap(),
        sizes.iter().max().unwrap(),
        project.reqs.len(),
        project.written.len() + TODOS + EXCEPTIONS
    );

    // For profiling or inspection: keep a copy of the generated project.
    if let Some(keep) = std::env::var_os("DUVET_BENCH_KEEP") {
        copy_dir(&project.root, Path::new(&keep));
        eprintln!("project copied to {}", keep.to_string_lossy());
    }

    let runtime = bench::runtime();
    let samples = samples(&project);
    let cold = runtime.block_on(run_cold(&bin, &project.root, COLD_RUNS, "cold run"));
    let warm = runtime.block_on(run_warm(&bin, &project, &samples));
    let peer = run_peer(&project.root);
    // Diagnostic: our cold start in the peer's copy, where `duvet report` has written
    // `.duvet/requirements` (as in a real project, where those files are committed).
    let with_requirements = match &peer {
        Ok(peer) if peer.first.success => runtime.block_on(run_cold(
            &bin,
            &peer.root(),
            DIAGNOSTIC_COLD_RUNS,
            "cold run with .duvet/requirements",
        )),
        _ => Vec::new(),
    };
    let report_runs = report_runs(&bin, &project.root, &peer);
    let mut report = report(&project, &cold, &warm, &peer, &with_requirements);
    report_section(&mut report, &report_runs);
    println!("{report}");
    eprintln!("{}", bench::write_report("duvet-bench.md", &report));
    eprintln!("total time {:.1?}", started.elapsed());
}

/// `count` fresh servers in `root`, each until its first answer.
async fn run_cold(bin: &Path, root: &Path, count: usize, label: &str) -> Vec<Cold> {
    let mut runs = Vec::new();
    for i in 0..count {
        let t = Instant::now();
        let mcp = start(bin, root, &["-v"]).await;
        let initialize = t.elapsed();
        let data = call(&mcp, "list_uncited_requirements", &json!({}))
            .await
            .data;
        let total = t.elapsed();
        assert_eq!(data.as_array().unwrap().len(), 100, "a full default page");
        let pid = mcp.pid().expect("the server's pid");
        let peak_kb = read_memory(pid).map(|m| m.peak);
        let stderr = mcp.shutdown().await;
        let analysis = analysed(&stderr);
        eprintln!(
            "{label} {}: {:.1?} (initialize {:.1?}, analysis {:?} ms)",
            i + 1,
            total,
            initialize,
            analysis.map(|a| a.0)
        );
        if i == 0
            && let Some(line) = stderr.lines().find(|l| l.contains("project analysed"))
        {
            eprintln!("  {line}");
        }
        runs.push(Cold {
            total,
            initialize,
            analysis_ms: analysis.map(|a| a.0),
            counts: analysis,
            peak_kb,
        });
    }
    runs
}

async fn run_warm(bin: &Path, project: &Project, samples: &Samples) -> Warm {
    let mcp = start(bin, &project.root, &[]).await;
    let pid = mcp.pid().expect("the server's pid");
    let first_call = call(&mcp, "list_invalid_citations", &json!({}))
        .await
        .elapsed;
    let mem_after_first = read_memory(pid);
    let mut sizes = [0usize; TOOLS.len()];
    for (t, tool) in TOOLS.iter().enumerate() {
        for i in 0..WARMUP {
            let TimedCall { data, text_len, .. } =
                call(&mcp, tool, &args_for(tool, i, samples)).await;
            check(tool, i, samples, &data);
            sizes[t] = text_len;
        }
    }
    let mut samples_by_tool: Vec<Vec<Duration>> = vec![Vec::with_capacity(ITERS); TOOLS.len()];
    let mut pings = Vec::with_capacity(ITERS * TOOLS.len());
    for i in 0..ITERS {
        for (t, tool) in TOOLS.iter().enumerate() {
            pings.push(ping(&mcp).await);
            let TimedCall { elapsed, data, .. } =
                call(&mcp, tool, &args_for(tool, WARMUP + i, samples)).await;
            check(tool, WARMUP + i, samples, &data);
            samples_by_tool[t].push(elapsed);
        }
    }
    let mem_after = read_memory(pid);
    let stderr = mcp.shutdown().await;
    if !stderr.trim().is_empty() {
        eprintln!("server stderr:\n{}", stderr.trim());
    }
    let rows = TOOLS
        .iter()
        .enumerate()
        .map(|(t, tool)| {
            (
                tool.to_string(),
                percentile(&samples_by_tool[t], 0.5),
                percentile(&samples_by_tool[t], 0.99),
                sizes[t],
            )
        })
        .collect();
    Warm {
        rows,
        pings,
        first_call,
        mem_after_first,
        mem_after,
    }
}

fn report(
    project: &Project,
    cold: &[Cold],
    warm: &Warm,
    peer: &Result<Peer, String>,
    with_requirements: &[Cold],
) -> String {
    let mut out = String::new();
    let sizes: Vec<usize> = project.specs.iter().map(|s| s.text.len()).collect();
    let sections: Vec<usize> = project.specs.iter().map(|s| s.sections).collect();
    let spec_bytes: usize = sizes.iter().sum();
    let count = |k: Kind| project.written.iter().filter(|w| w.kind == k).count();
    let q = &project.quote_stats;
    writeln!(
        out,
        "duvet mcp stdio benchmark; {}.\n\n\
         Project (generated in {:.1?}): {} Rust files ({:.1} MiB), {SPECS} IETF specifications \
         ({:.1} MiB, {:.0}–{:.0} KB each, {}–{} numbered sections each, {} requirement sentences \
         in all), {ANNOTATIONS} annotations: {} implementation and {} test citations in `tests/`, \
         {} `type=test` citations in `src/`, {TODOS} TODO and {EXCEPTIONS} exception entries. \
         Quotes: {} whole sentences (the TOML entries included), {} parts of sentences, {} with whitespace differences; the source quotes are wrapped at 76 columns, not as in the specifications.\n",
        machine(),
        project.generated_in,
        SRC_FILES + TEST_FILES,
        project.source_bytes as f64 / 1_048_576.0,
        spec_bytes as f64 / 1_048_576.0,
        *sizes.iter().min().unwrap() as f64 / 1000.0,
        *sizes.iter().max().unwrap() as f64 / 1000.0,
        sections.iter().min().unwrap(),
        sections.iter().max().unwrap(),
        project.reqs.len(),
        count(Kind::Implementation),
        count(Kind::Test),
        count(Kind::InlineTest),
        q.whole + TODOS + EXCEPTIONS,
        q.partial,
        q.whitespace,
    )
    .unwrap();
    if let Some((_, requirements, citations)) = cold.first().and_then(|c| c.counts) {
        writeln!(
            out,
            "The server found {requirements} requirements and {citations} citations, and no \
             invalid citation.\n"
        )
        .unwrap();
    }

    // Cold.
    let totals: Vec<Duration> = cold.iter().map(|c| c.total).collect();
    let cold_p50 = percentile(&totals, 0.5);
    let inits: Vec<Duration> = cold.iter().map(|c| c.initialize).collect();
    let analysis: Vec<u64> = cold.iter().filter_map(|c| c.analysis_ms).collect();
    let cold_peak = cold.iter().filter_map(|c| c.peak_kb).max();
    writeln!(out, "### Cold start\n").unwrap();
    writeln!(
        out,
        "Spawn `duvet mcp -v` in the project → first answer of `list_uncited_requirements`, \
         {COLD_RUNS} fresh processes.\n"
    )
    .unwrap();
    writeln!(out, "| | p50 | min | max |\n|---|---:|---:|---:|").unwrap();
    writeln!(
        out,
        "| spawn → first answer | {} |",
        p50_min_max(&totals, ms_scaled)
    )
    .unwrap();
    writeln!(
        out,
        "| of which spawn → `initialize` answered | {} |",
        p50_min_max(&inits, ms_scaled)
    )
    .unwrap();
    if !analysis.is_empty() {
        writeln!(
            out,
            "| analysis (`project analysed` elapsed_ms, server side) | {} |",
            p50_min_max(&analysis, whole_ms)
        )
        .unwrap();
    }
    let cold_ok = cold_p50.as_secs_f64() * 1e3 <= COLD_TARGET_MS;
    writeln!(
        out,
        "\nTarget cold p50 ≤ {COLD_TARGET_MS} ms: {} ({}). Peak memory of a cold process at its \
         first answer (VmHWM): {}.\n",
        met(cold_ok),
        ms_scaled(cold_p50),
        cold_peak.map_or("—".into(), mib)
    )
    .unwrap();

    // Warm.
    let ping_p50 = percentile(&warm.pings, 0.5);
    writeln!(out, "### Warm latency\n").unwrap();
    writeln!(
        out,
        "One server; after its first call ({}) and {WARMUP} warm-up call per tool, {ITERS} rounds \
         over the 11 tools, each call preceded by a `ping`. Latency: request sent → result decoded \
         by the rmcp client. Every result is checked (not an error, and the expected content).\n",
        ms_scaled(warm.first_call)
    )
    .unwrap();
    writeln!(
        out,
        "| tool | p50 | p99 | p50 / ping p50 | result size | p50 ≤ {WARM_TARGET_MS} ms? |\n\
         |---|---:|---:|---:|---:|---|"
    )
    .unwrap();
    writeln!(
        out,
        "| `ping` ({} round trips) | {} | {} | 1.00× | — | — |",
        warm.pings.len(),
        ms_scaled(ping_p50),
        ms_scaled(percentile(&warm.pings, 0.99))
    )
    .unwrap();
    let mut warm_ok = true;
    for (tool, p50, p99, size) in &warm.rows {
        let ok = p50.as_secs_f64() * 1e3 <= WARM_TARGET_MS;
        warm_ok &= ok;
        writeln!(
            out,
            "| `{tool}` | {} | {} | {:.1}× | {:.1} KiB | {} |",
            ms_scaled(*p50),
            ms_scaled(*p99),
            p50.as_secs_f64() / ping_p50.as_secs_f64(),
            *size as f64 / 1024.0,
            met(ok)
        )
        .unwrap();
    }
    writeln!(
        out,
        "\nTarget warm p50 ≤ {WARM_TARGET_MS} ms for every tool: {}.\n",
        met(warm_ok)
    )
    .unwrap();

    // Memory.
    writeln!(out, "### Memory of the server\n").unwrap();
    writeln!(out, "| | VmRSS | VmHWM (peak so far) |\n|---|---:|---:|").unwrap();
    for (label, m) in [
        ("after the first call (model built)", warm.mem_after_first),
        ("after all warm runs", warm.mem_after),
    ] {
        if let Some(m) = m {
            writeln!(out, "| {label} | {} | {} |", mib(m.rss), mib(m.peak)).unwrap();
        }
    }
    writeln!(out).unwrap();

    // Peer.
    writeln!(out, "### Peer: `duvet report` (published duvet 0.4.3)\n").unwrap();
    let peer = match peer {
        Err(reason) => {
            writeln!(out, "Peer skipped: {reason}.\n").unwrap();
            return out;
        }
        Ok(peer) => peer,
    };
    writeln!(
        out,
        "`{}` ({}), `duvet report` in a copy of the project (HTML report disabled in the \
         config, specifications from the cache, so no download). Its first run in the fresh \
         copy writes `.duvet/requirements` (one TOML file per section, as `duvet extract`); \
         the {PEER_RUNS} measured runs follow in the same copy, where the files exist, as in a \
         real project (Duvet commits them). Peak memory: {}.\n",
        peer.path.display(),
        peer.version,
        peer.method
    )
    .unwrap();
    let failed = std::iter::once(&peer.first)
        .chain(&peer.runs)
        .find(|r| !r.success);
    if let Some(failed) = failed {
        let tail: Vec<&str> = failed.stderr.lines().rev().take(30).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        writeln!(
            out,
            "The peer failed ({}); end of its stderr:\n```\n{}\n```\n",
            failed.status,
            tail.join("\n")
        )
        .unwrap();
    }
    writeln!(
        out,
        "| `duvet report` | wall p50 | min | max | peak RSS (max) | exit status |\n\
         |---|---:|---:|---:|---:|---|"
    )
    .unwrap();
    writeln!(
        out,
        "| first run, fresh copy (writes the requirement files) | {} | — | — | {} | {} |",
        ms_scaled(peer.first.wall),
        peer.first.peak_kb.map_or("—".into(), mib),
        peer.first.status
    )
    .unwrap();
    if peer.runs.is_empty() {
        return out;
    }
    let walls: Vec<Duration> = peer.runs.iter().map(|r| r.wall).collect();
    let wall_p50 = percentile(&walls, 0.5);
    let peak = peer.runs.iter().filter_map(|r| r.peak_kb).max();
    let statuses: Vec<&str> = peer.runs.iter().map(|r| r.status.as_str()).collect();
    writeln!(
        out,
        "| {} runs, requirement files present | {} | {} | {} |",
        peer.runs.len(),
        p50_min_max(&walls, ms_scaled),
        peak.map_or("—".into(), mib),
        statuses.join(", ")
    )
    .unwrap();
    if let Some(last) = peer.runs.last() {
        writeln!(
            out,
            "\nThe peer's own phase timings (last run):\n```\n{}\n```",
            last.stderr.trim_end()
        )
        .unwrap();
    }
    let ratio = cold_p50.as_secs_f64() / wall_p50.as_secs_f64();
    writeln!(
        out,
        "\nOur cold p50 / peer wall p50 = {} / {} = {ratio:.2}. Target ≤ 0.5: {}. Peak memory: \
         {} (ours, VmHWM) vs {} (peer).\n",
        ms_scaled(cold_p50),
        ms_scaled(wall_p50),
        met(ratio <= 0.5),
        cold_peak.map_or("—".into(), mib),
        peak.map_or("—".into(), mib),
    )
    .unwrap();

    if !with_requirements.is_empty() {
        let totals: Vec<Duration> = with_requirements.iter().map(|c| c.total).collect();
        let analysis: Vec<u64> = with_requirements
            .iter()
            .filter_map(|c| c.analysis_ms)
            .collect();
        let counts = with_requirements.first().and_then(|c| c.counts);
        writeln!(
            out,
            "### Diagnostic: our cold start with `.duvet/requirements` present\n\n\
             The same measurement as the cold start, {} times, in the peer's copy after its runs, \
             where `.duvet/requirements` holds the requirement files `duvet report` wrote (a real \
             project commits them, and our server parses them as well as the specification \
             texts). Not a target; it shows what these files cost a real project.\n",
            with_requirements.len()
        )
        .unwrap();
        writeln!(
            out,
            "| | p50 | min | max |\n|---|---:|---:|---:|\n| spawn → first answer | {} |",
            p50_min_max(&totals, ms_scaled)
        )
        .unwrap();
        if !analysis.is_empty() {
            writeln!(
                out,
                "| analysis (server side) | {} |",
                p50_min_max(&analysis, whole_ms)
            )
            .unwrap();
        }
        if let Some((_, requirements, citations)) = counts {
            writeln!(
                out,
                "\nThe server found {requirements} requirements and {citations} citations there. \
                 Peak memory (VmHWM): {}.\n",
                with_requirements
                    .iter()
                    .filter_map(|c| c.peak_kb)
                    .max()
                    .map_or("—".into(), mib)
            )
            .unwrap();
        }
    }
    out
}
