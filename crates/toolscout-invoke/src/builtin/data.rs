//! `json_query` and `clock`: pure tools without IO.

use chrono::{DateTime, Offset, SecondsFormat, Utc};
use chrono_tz::Tz;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolscout_spec::ToolSpec;

use crate::jsonpath::{self, BoundedPath, PathError, QueryError};
use crate::{ErrorKind, NativeTool, ToolError};

pub use crate::jsonpath::query_cost;

/// Most nodes (values, arrays and objects, nested ones included) of the queried value.
pub const JSON_QUERY_MAX_NODES: u64 = jsonpath::MAX_NODES;
/// Most nodes a query may visit, by the estimate of [`query_cost`].
pub const JSON_QUERY_MAX_COST: u64 = jsonpath::MAX_COST;
/// Most matches returned.
pub const JSON_QUERY_MAX_MATCHES: usize = 10_000;
/// Most bytes of the matches, written as JSON.
pub const JSON_QUERY_MAX_RESULT_BYTES: usize = 4 << 20;

/// Runs an RFC 9535 JSONPath query over a JSON value and returns the matches.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JsonQueryArgs {
    /// The JSON value to query: any object, array, string, number, boolean or null
    pub value: Value,
    /// RFC 9535 JSONPath expression, starting with $
    #[schemars(pattern(r"^\$"))]
    pub path: String,
}

/// The `json_query` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonQuery;

impl NativeTool for JsonQuery {
    const NAME: &'static str = "json_query";
    const SUMMARY: &'static str = "Select parts of a JSON value with a JSONPath query";
    type Args = JsonQueryArgs;
    type Output = Vec<Value>;

    fn spec(&self) -> toolscout_spec::Result<ToolSpec> {
        ToolSpec::from_args::<JsonQueryArgs>(Self::NAME, Self::SUMMARY)
            .returns("array: the matching values, in document order")
            .category("data")
            .with_metadata(|m| {
                m.read_only = true;
                m.idempotent = true;
            })
            .build()
    }

    async fn call(&self, args: JsonQueryArgs) -> Result<Vec<Value>, ToolError> {
        // CPU-bound: off the async threads, so that one query never stalls the others,
        // and one core each at most: a query waiting for a core when its call times out
        // never runs, so calls that keep coming cannot pile work up past their timeouts.
        let slot = super::cpu_slot().await;
        tokio::task::spawn_blocking(move || {
            let _slot = slot;
            run_query(&args)
        })
        .await
        .unwrap_or_else(|e| Err(ToolError::failed(format!("the query stopped: {e}"))))
    }
}

/// Runs a `json_query` within its bounds: the path's length and nesting, the value's
/// size, the query's estimated work and its patterns (see [`crate::jsonpath`]), the
/// number and size of the matches.
///
/// **Rationale:** a JSONPath query's work grows as a power of the value's size with
/// each descendant segment (`$..*..*..*` over a deep array matches millions of nodes),
/// and its parse time with each nested filter; run unchecked, one 300-byte request
/// exhausts the memory of the process, and a thousand nested parentheses its stack.
fn run_query(args: &JsonQueryArgs) -> Result<Vec<Value>, ToolError> {
    let path = BoundedPath::parse(&args.path).map_err(|e| {
        let message = match e {
            PathError::Invalid(_) => format!(
                "path {:?} is not a valid JSONPath: {e}; JSONPath starts with '$', e.g. $.items[0].name",
                excerpt(&args.path)
            ),
            _ => format!("path {:?} was refused: {e}", excerpt(&args.path)),
        };
        ToolError::invalid_arguments(message).with_details(json!({"path": excerpt(&args.path)}))
    })?;
    let matches = path.query(&args.value).map_err(|e| {
        let details = match &e {
            QueryError::TooCostly { cost } => {
                json!({"path": excerpt(&args.path), "estimated_nodes": cost, "limit": JSON_QUERY_MAX_COST})
            }
            _ => json!({"path": excerpt(&args.path)}),
        };
        too_large(format!("the path {:?} was not run: {e}", excerpt(&args.path))).with_details(details)
    })?;
    if matches.len() > JSON_QUERY_MAX_MATCHES {
        return Err(too_large(format!(
            "the path {:?} matches {} values, over the limit of {JSON_QUERY_MAX_MATCHES}; narrow it",
            excerpt(&args.path),
            matches.len()
        )));
    }
    // Measured before anything is copied: a match may be a large subtree, many times over.
    let mut budget = Budget(JSON_QUERY_MAX_RESULT_BYTES);
    for m in &matches {
        if serde_json::to_writer(&mut budget, m).is_err() {
            return Err(too_large(format!(
                "the matches of {:?} are over {JSON_QUERY_MAX_RESULT_BYTES} bytes of JSON; narrow the path",
                excerpt(&args.path)
            )));
        }
    }
    Ok(matches.into_iter().cloned().collect())
}

/// The path as an error quotes it: whole when short, else its start (a refused path may
/// be kilobytes long).
fn excerpt(path: &str) -> String {
    const QUOTED: usize = 200;
    match path.char_indices().nth(QUOTED) {
        None => path.to_owned(),
        Some((at, _)) => format!("{}…", &path[..at]),
    }
}

fn too_large(message: String) -> ToolError {
    ToolError::new(ErrorKind::TooLarge, message)
}

/// A writer that fails once more than its bytes are written.
struct Budget(usize);

impl std::io::Write for Budget {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 = self
            .0
            .checked_sub(buf.len())
            .ok_or_else(|| std::io::Error::other("over budget"))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What `clock` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(transform = super::plain_enum)]
pub enum ClockAction {
    /// The current time.
    Now,
    /// Convert `time` to `time_zone`.
    Convert,
}

/// Tells the current time in a time zone, or converts a time to another time zone.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClockArgs {
    /// now: the current time; convert: convert time to time_zone
    pub action: ClockAction,
    /// IANA time-zone name, e.g. America/New_York
    #[serde(default = "utc")]
    pub time_zone: String,
    /// RFC 3339 timestamp to convert (action convert only)
    #[serde(default)]
    #[schemars(with = "String", extend("format" = "date-time"), transform = super::no_default)]
    pub time: Option<String>,
}

fn utc() -> String {
    "UTC".to_owned()
}

/// What `clock` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ClockOutput {
    /// The time, RFC 3339, in the time zone.
    pub time: String,
    /// The IANA time zone name.
    pub time_zone: String,
    /// The zone's offset from UTC at that time, e.g. `+02:00`.
    pub utc_offset: String,
    /// The same instant as seconds since the Unix epoch.
    pub unix_seconds: i64,
}

/// The `clock` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct Clock;

impl NativeTool for Clock {
    const NAME: &'static str = "clock";
    const SUMMARY: &'static str = "Current time in a time zone, or convert a time between zones";
    type Args = ClockArgs;
    type Output = ClockOutput;

    fn spec(&self) -> toolscout_spec::Result<ToolSpec> {
        ToolSpec::from_args::<ClockArgs>(Self::NAME, Self::SUMMARY)
            .returns("object: time (RFC 3339), time_zone, utc_offset")
            .category("time")
            .with_metadata(|m| m.read_only = true)
            .build()?
            .with_output::<ClockOutput>()
    }

    async fn call(&self, args: ClockArgs) -> Result<ClockOutput, ToolError> {
        let zone_name = args.time_zone.as_str();
        let tz: Tz = zone_name.parse().map_err(|_| {
            ToolError::invalid_arguments(format!(
                "unknown time zone {zone_name:?}; use an IANA name such as \"Europe/Paris\" or \"UTC\""
            ))
            .with_details(json!({"time_zone": zone_name}))
        })?;
        let instant: DateTime<Utc> = match args.action {
            ClockAction::Now => Utc::now(),
            ClockAction::Convert => {
                let text = args.time.as_deref().ok_or_else(|| {
                    ToolError::invalid_arguments(
                        "action \"convert\" needs `time`, an RFC 3339 time such as 2024-05-14T13:44:00Z",
                    )
                })?;
                DateTime::parse_from_rfc3339(text)
                    .map_err(|e| {
                        ToolError::invalid_arguments(format!(
                            "time {text:?} is not RFC 3339 ({e}); write e.g. 2024-05-14T13:44:00Z"
                        ))
                    })?
                    .with_timezone(&Utc)
            }
        };
        let local = instant.with_timezone(&tz);
        let seconds = local.offset().fix().local_minus_utc();
        let sign = if seconds < 0 { '-' } else { '+' };
        let abs = seconds.unsigned_abs();
        Ok(ClockOutput {
            time: local.to_rfc3339_opts(SecondsFormat::Secs, false),
            time_zone: tz.name().to_owned(),
            utc_offset: format!("{sign}{:02}:{:02}", abs / 3600, (abs % 3600) / 60),
            unix_seconds: instant.timestamp(),
        })
    }
}
