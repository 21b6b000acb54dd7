//! Related tickets, likely duplicates and estimates: the store finds candidates by their
//! words (and, in PostgreSQL, their titles' trigrams); [`crate::similarity`] scores them the
//! same way in both modes.
//!
//! - `jility_suggest_related`: the likely duplicates first (score ≥ [`DUPLICATE_SCORE`]),
//!   then the closely related (score ≥ [`CLOSE_SCORE`]), open before done, then the fainter
//!   ones, open before done; each group by score, then newest. (On the labelled set this
//!   order finds a duplicate among the first three as often as score order alone, while a
//!   done ticket no longer hides an open one of about the same score.)
//! - Creating a ticket answers its likely duplicates beside it (never refusing it).
//! - `jility_estimate_effort`: story points from the most alike done tickets with points.

use mcp_common_core::{Limit, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Tracker;
use super::checks::{invalid, resolve};
use crate::model::{Kind, Status};
use crate::params::{EstimateEffort, SuggestRelated};
use crate::similarity::{Corpus, DUPLICATE_SCORE, Likeness, Profile, RELATED_SCORE, Stems};
use crate::store::{Filter, PROBE_WORDS, Probe, Store, StoreTx, TITLE_WORDS, Test, TicketRow};

/// How many related tickets an answer holds: 5 unless asked, at most 20.
pub const RELATED_LIMIT: Limit = Limit::new(5, 20);

/// From this score on, a ticket is closely related: listed before fainter ones.
const CLOSE_SCORE: f64 = 0.15;

/// Candidates the store is asked for of each kind (see [`crate::store::RelatedTx`]): the
/// set each word's rarity is measured in.
const CANDIDATES: usize = 30;

/// Likely duplicates a new ticket's answer names at most.
const DUPLICATES_ON_CREATE: usize = 3;

/// Done tickets an estimate rests on at most, and the score each must reach.
const ESTIMATE_BASIS: usize = 5;
const ESTIMATE_SCORE: f64 = 0.2;

/// The story points an estimate answers (the scale tickets take).
const SCALE: [u8; 6] = [1, 2, 3, 5, 8, 13];

/// What was compared: a filed ticket, or the title of one about to be.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProbeInfo {
    /// The filed ticket's number (`KEY-N`), when it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ticket: Option<String>,
    pub title: String,
}

/// A ticket like the probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RelatedTicket {
    pub number: String,
    pub title: String,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub story_points: Option<u8>,
    /// How alike, 0 to 1 (two decimals).
    pub score: f64,
    /// A likely duplicate: the score is at least the duplicate threshold.
    pub duplicate: bool,
    /// The probe's words it has too (as the probe writes them).
    pub matched: Vec<String>,
    /// Where: `title` (shared words, or titles alike), `description`.
    pub fields: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Related {
    pub probe: ProbeInfo,
    /// Likely duplicates first; then the closely related (score 0.15 or more), open before
    /// done; then fainter ones, open before done; each group by score.
    pub related: Vec<RelatedTicket>,
    /// How many of them are likely duplicates.
    pub duplicates: usize,
    /// The score from which a ticket is flagged as a likely duplicate.
    pub duplicate_threshold: f64,
}

/// A done ticket an estimate rests on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EstimateBasis {
    pub number: String,
    pub title: String,
    pub story_points: u8,
    /// How alike, 0 to 1 (two decimals).
    pub score: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Estimate {
    pub probe: ProbeInfo,
    /// The estimate on the points scale (1, 2, 3, 5, 8, 13); absent when there is not
    /// enough history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub story_points: Option<u8>,
    /// The fewest and most points of the tickets it rests on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<PointsRange>,
    /// `high` (3 or more alike tickets agreeing within one step of the scale), `low`, or
    /// `none` (not enough history).
    pub confidence: String,
    /// The done tickets it rests on, most alike first.
    pub based_on: Vec<EstimateBasis>,
    /// How it was reached, or why there is none.
    pub reason: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PointsRange {
    pub low: u8,
    pub high: u8,
}

/// A probe read: its profile, what the answer says it is, and the ticket left out.
struct Probed {
    profile: Profile,
    info: ProbeInfo,
    exclude: Option<i64>,
}

fn probed(
    tx: &mut dyn StoreTx,
    ticket_id: Option<&str>,
    title: Option<&str>,
    description: Option<&str>,
) -> Result<Probed, ToolError> {
    // As the API refuses NUL in any argument, so does every mode: nothing echoes one back.
    if [ticket_id, title, description]
        .iter()
        .flatten()
        .any(|text| text.contains('\0'))
    {
        return Err(invalid(
            "The probe contains a NUL character (\\u0000)",
            "Remove the NUL characters; text may hold any other character.",
        ));
    }
    let ticket_id = ticket_id.map(str::trim).filter(|t| !t.is_empty());
    let title = title.map(str::trim).filter(|t| !t.is_empty());
    match (ticket_id, title) {
        (Some(_), Some(_)) => Err(invalid(
            "`ticket_id` and `title` are given together",
            "Name a filed ticket with `ticket_id`, or describe one not yet filed with `title` (and `description`), not both.",
        )),
        (None, None) => Err(invalid(
            "Nothing to compare: give `ticket_id`, or `title`",
            "Name a filed ticket (`ticket_id: \"KEY-N\"`), or give the `title` and `description` of one you are about to file.",
        )),
        (Some(reference), None) => {
            if description.is_some() {
                return Err(invalid(
                    "`description` goes with `title`, not with `ticket_id`",
                    "A filed ticket is compared by its own title and description: leave out `description`.",
                ));
            }
            let row = resolve(tx, reference)?;
            Ok(Probed {
                profile: Profile::new(&row.title, &row.description),
                info: ProbeInfo {
                    ticket: Some(row.display_number()),
                    title: row.title.clone(),
                },
                exclude: Some(row.id),
            })
        }
        (None, Some(title)) => Ok(Probed {
            profile: Profile::new(title, description.unwrap_or_default()),
            info: ProbeInfo {
                ticket: None,
                // One line, as a title is.
                title: title.split_whitespace().collect::<Vec<_>>().join(" "),
            },
            exclude: None,
        }),
    }
}

/// The candidates for `probe` that `filter` keeps, each with how alike it is, best first
/// (score, then newest); those under [`RELATED_SCORE`] left out.
fn scored(
    tx: &mut dyn StoreTx,
    probe: &Profile,
    exclude: Option<i64>,
    filter: &Filter,
) -> Result<Vec<(TicketRow, Likeness)>, ToolError> {
    let words = probe.probe_words(PROBE_WORDS);
    let title_words = probe.title_words(TITLE_WORDS);
    let rows = tx.related_candidates(
        &Probe {
            title_words: &title_words,
            words: &words,
            title: &probe.title,
            exclude,
            filter,
        },
        CANDIDATES,
    )?;
    let mut stems = Stems::default();
    let profiles: Vec<Profile> = rows
        .iter()
        .map(|row| Profile::with(&mut stems, &row.title, &row.description))
        .collect();
    let corpus = Corpus::of(&profiles);
    let mut out: Vec<(TicketRow, Likeness)> = rows
        .into_iter()
        .zip(&profiles)
        .map(|(row, profile)| {
            let likeness = probe.compare(profile, &corpus);
            (row, likeness)
        })
        .filter(|(_, likeness)| likeness.score >= RELATED_SCORE)
        .collect();
    out.sort_by(|(a, x), (b, y)| y.score.total_cmp(&x.score).then(b.id.cmp(&a.id)));
    Ok(out)
}

/// A likely duplicate: the score reaches the threshold, on two shared words at least (one
/// shared word — a one-word title — tells too little).
fn is_duplicate(likeness: &Likeness) -> bool {
    likeness.is_duplicate() && likeness.matched.len() >= 2
}

fn related_ticket(row: &TicketRow, likeness: &Likeness) -> RelatedTicket {
    let mut fields = Vec::new();
    if likeness.in_title || likeness.title_similarity >= DUPLICATE_SCORE {
        fields.push("title".to_string());
    }
    if likeness.in_description {
        fields.push("description".to_string());
    }
    RelatedTicket {
        number: row.display_number(),
        title: row.title.clone(),
        status: row.status,
        story_points: row.story_points,
        score: likeness.score,
        duplicate: is_duplicate(likeness),
        matched: likeness.matched.clone(),
        fields,
    }
}

/// The related tickets of `probe` in the order of the module's docs, at most `limit`.
fn related(
    tx: &mut dyn StoreTx,
    probe: &Profile,
    exclude: Option<i64>,
    limit: usize,
) -> Result<Vec<RelatedTicket>, ToolError> {
    let mut found = scored(tx, probe, exclude, &Filter::default())?;
    // A stable sort keeps score order within each group.
    // Likely duplicates by score alone (an exact done duplicate before a fainter open one).
    found.sort_by_key(|(row, likeness)| {
        if is_duplicate(likeness) {
            (false, false, false)
        } else {
            (
                true,
                likeness.score < CLOSE_SCORE,
                row.status == Status::Done,
            )
        }
    });
    Ok(found
        .iter()
        .take(limit)
        .map(|(row, likeness)| related_ticket(row, likeness))
        .collect())
}

/// The likely duplicates of a ticket just made (row `id`), for its answer.
pub(super) fn duplicates_of_new(
    tx: &mut dyn StoreTx,
    row: &TicketRow,
) -> Result<Vec<RelatedTicket>, ToolError> {
    let probe = Profile::new(&row.title, &row.description);
    if probe.is_empty() {
        return Ok(Vec::new());
    }
    let mut found = related(tx, &probe, Some(row.id), DUPLICATES_ON_CREATE)?;
    found.retain(|t| t.duplicate);
    Ok(found)
}

/// The estimate from `basis` (most alike first): the score-weighted median of their
/// points, on the scale.
fn estimate_of(basis: &[EstimateBasis]) -> Option<(u8, PointsRange, bool)> {
    let mut points: Vec<(u8, f64)> = basis.iter().map(|b| (b.story_points, b.score)).collect();
    points.sort_by_key(|p| p.0);
    let total: f64 = points.iter().map(|p| p.1).sum();
    let mut seen = 0.0;
    let mut median = None;
    for (p, weight) in &points {
        seen += weight;
        if seen * 2.0 >= total {
            median = Some(*p);
            break;
        }
    }
    let median = median?;
    let snapped = SCALE
        .iter()
        .copied()
        .min_by_key(|s| (i32::from(*s) - i32::from(median)).abs())?;
    let range = PointsRange {
        low: points.first()?.0,
        high: points.last()?.0,
    };
    let step = |p: u8| SCALE.iter().position(|s| *s >= p).unwrap_or(SCALE.len());
    let agree = basis.len() >= 3 && step(range.high) - step(range.low) <= 1;
    Some((snapped, range, agree))
}

impl<S: Store> Tracker<S> {
    /// `jility_suggest_related`: the tickets most like a filed ticket or a draft.
    pub fn suggest_related(&mut self, p: SuggestRelated) -> Result<Related, ToolError> {
        let limit = match p.limit {
            Some(n) if n < 1 || n > RELATED_LIMIT.max as i64 => {
                return Err(ToolError::invalid_params(format!(
                    "limit {n} is out of range: give 1 to {}",
                    RELATED_LIMIT.max
                ))
                .with_hint(format!(
                    "Leave out limit for the best {}, or ask for up to {}.",
                    RELATED_LIMIT.default, RELATED_LIMIT.max
                )));
            }
            Some(n) => n as usize,
            None => RELATED_LIMIT.default,
        };
        self.store.read(|tx| {
            let probe = probed(
                tx,
                p.ticket_id.as_deref(),
                p.title.as_deref(),
                p.description.as_deref(),
            )?;
            let related = if probe.profile.is_empty() {
                Vec::new()
            } else {
                related(tx, &probe.profile, probe.exclude, limit)?
            };
            Ok(Related {
                probe: probe.info,
                duplicates: related.iter().filter(|t| t.duplicate).count(),
                related,
                duplicate_threshold: DUPLICATE_SCORE,
            })
        })
    }

    /// `jility_estimate_effort`: story points from the most alike done tickets with points.
    pub fn estimate_effort(&mut self, p: EstimateEffort) -> Result<Estimate, ToolError> {
        self.store.read(|tx| {
            let probe = probed(
                tx,
                p.ticket_id.as_deref(),
                p.title.as_deref(),
                p.description.as_deref(),
            )?;
            // Done tickets with points, not epics (an epic's points are its tickets').
            let done = Filter::default()
                .with(Test::Status(vec![Status::Done]))
                .with(Test::Points(Some((1, u8::MAX))))
                .with(Test::Kind(Kind::Ticket));
            let found = if probe.profile.is_empty() {
                Vec::new()
            } else {
                scored(tx, &probe.profile, probe.exclude, &done)?
            };
            let based_on: Vec<EstimateBasis> = found
                .iter()
                .filter(|(row, likeness)| {
                    likeness.score >= ESTIMATE_SCORE && row.story_points.is_some()
                })
                .take(ESTIMATE_BASIS)
                .map(|(row, likeness)| EstimateBasis {
                    number: row.display_number(),
                    title: row.title.clone(),
                    story_points: row.story_points.unwrap_or_default(),
                    score: likeness.score,
                })
                .collect();
            Ok(match estimate_of(&based_on) {
                None => Estimate {
                    probe: probe.info,
                    story_points: None,
                    range: None,
                    confidence: "none".to_string(),
                    based_on: Vec::new(),
                    reason: format!(
                        "Not enough history: no done ticket with story points is alike enough (score {ESTIMATE_SCORE} or more)."
                    ),
                },
                Some((points, range, agree)) => Estimate {
                    probe: probe.info,
                    story_points: Some(points),
                    range: Some(range),
                    confidence: if agree { "high" } else { "low" }.to_string(),
                    reason: format!(
                        "The median of the points of the {} most alike done ticket{}, weighed by how alike each is, on the points scale.",
                        based_on.len(),
                        if based_on.len() == 1 { "" } else { "s" }
                    ),
                    based_on,
                },
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn basis(points: &[(u8, f64)]) -> Vec<EstimateBasis> {
        points
            .iter()
            .map(|(p, s)| EstimateBasis {
                number: "T-1".into(),
                title: "t".into(),
                story_points: *p,
                score: *s,
            })
            .collect()
    }

    #[test]
    fn an_estimate_is_the_weighted_median_on_the_scale() {
        assert_eq!(estimate_of(&[]), None);
        let (points, range, agree) = estimate_of(&basis(&[(3, 0.6), (5, 0.5), (3, 0.4)])).unwrap();
        assert_eq!((points, range.low, range.high, agree), (3, 3, 5, true));
        // One very alike ticket outweighs two faint ones.
        let (points, _, agree) = estimate_of(&basis(&[(8, 0.9), (2, 0.2), (1, 0.2)])).unwrap();
        assert_eq!((points, agree), (8, false));
        // Points off the scale snap to the nearest step.
        let (points, _, _) = estimate_of(&basis(&[(4, 0.5)])).unwrap();
        assert_eq!(points, 3);
    }
}
