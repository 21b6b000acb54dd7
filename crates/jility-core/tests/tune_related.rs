use jility_core::similarity::{Profile, DUPLICATE_SCORE};
use serde_json::Value;

#[test]
fn tune() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../jility/tests/data/related.json");
    let d: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let tickets: Vec<(String, Profile, bool)> = d["tickets"].as_array().unwrap().iter().map(|t| (t["id"].as_str().unwrap().to_string(), Profile::new(t["title"].as_str().unwrap(), t["description"].as_str().unwrap()), t["status"] != "done")).collect();
    let th: f64 = std::env::var("TH").ok().and_then(|s| s.parse().ok()).unwrap_or(DUPLICATE_SCORE);
    let (mut dups, mut hit3, mut tp, mut fp, mut flagged_dup_pairs, mut nm_flagged) = (0, 0, 0, 0, 0, 0);
    let mut nm = 0; let mut pure3 = 0;
    for p in d["probes"].as_array().unwrap() {
        let probe = Profile::new(p["title"].as_str().unwrap(), p["description"].as_str().unwrap());
        let mut scored: Vec<(f64, bool, &str)> = tickets.iter().map(|(id, t, open)| (probe.compare(t).score, *open, id.as_str())).collect();
        scored.sort_by(|a, b| ((b.0 >= th), b.1 , b.0).partial_cmp(&((a.0 >= th), a.1, a.0)).unwrap());
        let mut pure = scored.clone();
        pure.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap());
        if let Some(dup) = p["duplicate_of"].as_str() { if pure.iter().position(|s| s.2 == dup).unwrap() < 3 { pure3 += 1; } }
        let flagged: Vec<&str> = scored.iter().filter(|s| s.0 >= th).map(|s| s.2).collect();
        if let Some(dup) = p["duplicate_of"].as_str() {
            dups += 1;
            let pos = scored.iter().position(|s| s.2 == dup).unwrap();
            if pos < 3 { hit3 += 1; } else { eprintln!("MISS@3 {} pos {pos} score {:.2} top {:?} | {}", p["id"], scored[pos].0, &scored[..3], p["title"]); }
            if flagged.contains(&dup) { flagged_dup_pairs += 1; }
            tp += flagged.iter().filter(|f| **f == dup).count();
            fp += flagged.iter().filter(|f| **f != dup).count();
        } else {
            nm += 1;
            let nmid = p["near_miss_of"].as_str().unwrap();
            if flagged.contains(&nmid) { nm_flagged += 1; eprintln!("NM FLAGGED {} {}", p["id"], p["title"]); }
            fp += flagged.len();
        }
    }
    eprintln!("pure@3 {}", pure3);
    eprintln!("th {th}: recall@3 {}/{} = {:.3}; flag recall {}/{} = {:.3}; flag precision {}/{} = {:.3}; near-miss pairs flagged {nm_flagged}/{nm}", hit3, dups, hit3 as f64 / dups as f64, flagged_dup_pairs, dups, flagged_dup_pairs as f64 / dups as f64, tp, tp + fp, tp as f64 / (tp + fp).max(1) as f64);
}
