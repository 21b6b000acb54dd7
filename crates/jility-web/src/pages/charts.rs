//! Charts drawn on the server as SVG (no script, no inline style: the CSP stays as strict as
//! ever), each beside a table of the same numbers for screen readers and for reading exact
//! values: a sprint's burndown (remaining points a day beside the ideal line) and the
//! velocity of completed sprints (a bar each, the mean as a line).

use maud::{Markup, html};

const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 240.0;
/// Room for the axis labels.
const LEFT: f64 = 40.0;
const BOTTOM: f64 = 28.0;
const TOP: f64 = 12.0;
const RIGHT: f64 = 12.0;

fn plot_width() -> f64 {
    WIDTH - LEFT - RIGHT
}

fn plot_height() -> f64 {
    HEIGHT - TOP - BOTTOM
}

/// The y of `value` on a scale whose top is `top`.
fn y(value: f64, top: f64) -> f64 {
    let top = if top <= 0.0 { 1.0 } else { top };
    TOP + plot_height() * (1.0 - value / top)
}

fn fmt(x: f64) -> String {
    format!("{x:.1}")
}

/// A round top for the scale (1, 2, 5, 10, 20, 50, …) at or above `max`.
fn nice_top(max: f64) -> f64 {
    let mut step = 1.0;
    loop {
        for m in [1.0, 2.0, 5.0] {
            if m * step >= max {
                return m * step;
            }
        }
        step *= 10.0;
    }
}

/// The scale's lines and labels: 0, half and the top.
fn axis(top: f64) -> Markup {
    html! {
        @for v in [0.0, top / 2.0, top] {
            line class="grid" x1=(fmt(LEFT)) x2=(fmt(WIDTH - RIGHT)) y1=(fmt(y(v, top))) y2=(fmt(y(v, top))) {}
            text class="tick" x=(fmt(LEFT - 6.0)) y=(fmt(y(v, top) + 4.0)) text-anchor="end" {
                (if v.fract() == 0.0 { format!("{v:.0}") } else { format!("{v:.1}") })
            }
        }
    }
}

/// One day of a burndown: its date, the remaining points and the ideal.
pub struct Day<'a> {
    pub date: &'a str,
    pub remaining: u64,
    pub ideal: f64,
}

/// The burndown of `days` as SVG, then its table. `total_days`: the sprint's length, so that
/// the line stops where today is; `last_day` labels the axis's end.
pub fn burndown(days: &[Day<'_>], total_days: usize, last_day: &str, caption: &str) -> Markup {
    let top = nice_top(
        days.iter()
            .map(|d| (d.remaining as f64).max(d.ideal))
            .fold(1.0, f64::max),
    );
    let slots = total_days.max(days.len()).max(2);
    let x = |i: usize| LEFT + plot_width() * i as f64 / (slots - 1) as f64;
    let points = |values: &mut dyn Iterator<Item = (usize, f64)>| -> String {
        values
            .map(|(i, v)| format!("{},{}", fmt(x(i)), fmt(y(v, top))))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let actual = points(
        &mut days
            .iter()
            .enumerate()
            .map(|(i, d)| (i, d.remaining as f64)),
    );
    let ideal = points(&mut days.iter().enumerate().map(|(i, d)| (i, d.ideal)));
    let summary = match (days.first(), days.last()) {
        (Some(first), Some(last)) => format!(
            "Burndown from {} to {}: {} points remaining at the start of the chart, {} at its end",
            first.date, last.date, first.remaining, last.remaining
        ),
        _ => "Burndown: no day yet".to_string(),
    };
    html! {
        figure class="chart burndown" {
            svg viewBox=(format!("0 0 {WIDTH} {HEIGHT}")) role="img" aria-label=(summary) {
                (axis(top))
                polyline class="ideal" points=(ideal) fill="none" {}
                polyline class="actual" points=(actual) fill="none" {}
                @for (i, d) in days.iter().enumerate() {
                    circle class="actual" cx=(fmt(x(i))) cy=(fmt(y(d.remaining as f64, top))) r="3" {}
                }
                @if let Some(first) = days.first() {
                    text class="tick" x=(fmt(x(0))) y=(fmt(HEIGHT - 8.0)) text-anchor="start" { (first.date) }
                }
                @if days.first().is_some_and(|d| d.date != last_day) {
                    text class="tick" x=(fmt(x(slots - 1))) y=(fmt(HEIGHT - 8.0)) text-anchor="end" { (last_day) }
                }
            }
            figcaption {
                (caption) " "
                span class="key actual" { "remaining" } " · " span class="key ideal" { "ideal" }
            }
        }
        div class="table-scroll" {
            table class="plain chart-data" data-chart="burndown" {
                caption { "Remaining points at the end of each day" }
                thead { tr { th scope="col" { "Day" } th scope="col" { "Remaining" } th scope="col" { "Ideal" } } }
                tbody {
                    @for d in days {
                        tr { th scope="row" { (d.date) } td { (d.remaining) } td { (fmt(d.ideal)) } }
                    }
                }
            }
        }
    }
}

/// The completed points of each sprint, oldest first, as bars with the mean, then the table.
pub fn velocity(sprints: &[(String, i64)], caption: &str) -> Markup {
    let mean = if sprints.is_empty() {
        0.0
    } else {
        sprints.iter().map(|(_, p)| *p as f64).sum::<f64>() / sprints.len() as f64
    };
    let top = nice_top(sprints.iter().map(|(_, p)| *p as f64).fold(1.0, f64::max));
    let slot = plot_width() / sprints.len().max(1) as f64;
    let bar = (slot * 0.6).min(48.0);
    let summary = format!(
        "Velocity of {} completed sprints, a mean of {} points",
        sprints.len(),
        fmt(mean)
    );
    html! {
        figure class="chart velocity" {
            svg viewBox=(format!("0 0 {WIDTH} {HEIGHT}")) role="img" aria-label=(summary) {
                (axis(top))
                @for (i, (name, points)) in sprints.iter().enumerate() {
                    @let cx = LEFT + slot * (i as f64 + 0.5);
                    rect class="bar" x=(fmt(cx - bar / 2.0)) y=(fmt(y(*points as f64, top)))
                        width=(fmt(bar)) height=(fmt((y(0.0, top) - y(*points as f64, top)).max(0.0))) {}
                    text class="tick" x=(fmt(cx)) y=(fmt(y(*points as f64, top) - 4.0)) text-anchor="middle" { (points) }
                    text class="tick" x=(fmt(cx)) y=(fmt(HEIGHT - 8.0)) text-anchor="middle" { (name) }
                }
                @if !sprints.is_empty() {
                    line class="mean" x1=(fmt(LEFT)) x2=(fmt(WIDTH - RIGHT)) y1=(fmt(y(mean, top))) y2=(fmt(y(mean, top))) {}
                }
            }
            figcaption { (caption) " " span class="key mean" { "mean " (fmt(mean)) } }
        }
        div class="table-scroll" {
            table class="plain chart-data" data-chart="velocity" {
                caption { "Points completed by each sprint" }
                thead { tr { th scope="col" { "Sprint" } th scope="col" { "Completed points" } } }
                tbody {
                    @for (name, points) in sprints {
                        tr { th scope="row" { (name) } td { (points) } }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_are_round_and_points_land_on_them() {
        assert_eq!(nice_top(0.5), 1.0);
        assert_eq!(nice_top(13.0), 20.0);
        assert_eq!(nice_top(50.0), 50.0);
        assert_eq!(nice_top(51.0), 100.0);
        assert_eq!(y(0.0, 20.0), TOP + plot_height());
        assert_eq!(y(20.0, 20.0), TOP);
    }

    #[test]
    fn the_charts_carry_their_numbers_in_a_table() {
        let days = [
            Day {
                date: "2026-12-01",
                remaining: 10,
                ideal: 9.0,
            },
            Day {
                date: "2026-12-02",
                remaining: 7,
                ideal: 8.0,
            },
        ];
        let html = burndown(&days, 10, "2026-12-10", "Sprint 1").into_string();
        assert!(
            html.contains(">2026-12-10</text>"),
            "the axis ends at the sprint's last day"
        );
        assert!(
            html.contains("<th scope=\"row\">2026-12-02</th><td>7</td><td>8.0</td>"),
            "{html}"
        );
        assert!(html.contains("role=\"img\""));
        assert!(!html.contains("style="), "no inline style under the CSP");
        let html = velocity(&[("S1".into(), 5), ("S2".into(), 7)], "Velocity").into_string();
        assert!(
            html.contains("<th scope=\"row\">S2</th><td>7</td>"),
            "{html}"
        );
        assert!(html.contains("mean 6.0"), "{html}");
    }
}
