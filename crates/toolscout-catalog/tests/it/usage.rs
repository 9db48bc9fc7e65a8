use chrono::{SubsecRound, TimeDelta, Utc};
use toolscout_catalog::Error;
use uuid::Uuid;

use crate::{bundle, http_put, open_bare};

#[test]
fn calls_are_counted_in_a_usage_file_and_add_up_across_processes() {
    let dir = tempfile::tempdir().unwrap();
    let a = open_bare(dir.path());
    let b = bundle(&a, 1, "b");
    let t = a.put_tool(b, "t", "1", &http_put("t")).unwrap();
    let tool_bytes = t.path.as_ref().map(|p| std::fs::read(p).unwrap());
    let t0 = Utc::now();
    for i in 0..3 {
        a.record_call(t.id, t0 + TimeDelta::seconds(i)).unwrap();
    }
    // Counted in memory at once.
    assert_eq!(a.tool(t.id).unwrap().usage.call_count, 3);
    let other = open_bare(dir.path());
    other.record_call(t.id, t0 - TimeDelta::days(1)).unwrap();
    other.flush_usage().unwrap();
    a.flush_usage().unwrap();
    let u = open_bare(dir.path()).tool(t.id).unwrap().usage;
    assert_eq!(u.call_count, 4);
    // Kept to the microsecond, as every store keeps times.
    assert_eq!(
        u.last_called_at,
        Some((t0 + TimeDelta::seconds(2)).trunc_subsecs(6))
    );
    // The tool file itself is never rewritten for a call.
    assert_eq!(
        t.path.as_ref().map(|p| std::fs::read(p).unwrap()),
        tool_bytes
    );
    assert!(matches!(
        a.record_call(Uuid::now_v7(), t0),
        Err(Error::ToolIdNotFound { .. })
    ));
}

#[test]
fn dropping_the_catalog_writes_pending_calls() {
    let dir = tempfile::tempdir().unwrap();
    let a = open_bare(dir.path());
    let b = bundle(&a, 1, "b");
    let t = a.put_tool(b, "t", "1", &http_put("t")).unwrap();
    a.record_call(t.id, Utc::now()).unwrap();
    drop(a);
    assert_eq!(
        open_bare(dir.path()).tool(t.id).unwrap().usage.call_count,
        1
    );
}
