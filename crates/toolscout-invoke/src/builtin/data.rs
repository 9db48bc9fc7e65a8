//! `json_query` and `clock`: pure tools without IO.

use chrono::{DateTime, Offset, SecondsFormat, Utc};
use chrono_tz::Tz;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use serde_json_path::JsonPath;
use toolscout_spec::ToolSpec;

use crate::{ErrorKind, NativeTool, ToolError};

/// Most nodes (values, arrays and objects, nested ones included) of the queried value.
pub const JSON_QUERY_MAX_NODES: u64 = 200_000;
/// Most nodes a query may visit, by the estimate of [`query_cost`].
pub const JSON_QUERY_MAX_COST: u64 = 10_000_000;
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
        // CPU-bound: off the async threads, so that one query never stalls the others.
        tokio::task::spawn_blocking(move || run_query(&args))
            .await
            .unwrap_or_else(|e| Err(ToolError::failed(format!("the query stopped: {e}"))))
    }
}

/// Runs a `json_query` within its bounds: the value's size, the query's estimated work,
/// the number and size of the matches.
///
/// **Rationale:** a JSONPath query's work grows as a power of the value's size with
/// each descendant segment (`$..*..*..*` over a deep array matches millions of nodes);
/// run unchecked, one 300-byte request exhausts the memory of the process.
fn run_query(args: &JsonQueryArgs) -> Result<Vec<Value>, ToolError> {
    let path = JsonPath::parse(&args.path).map_err(|e| {
        ToolError::invalid_arguments(format!(
            "path {:?} is not a valid JSONPath: {e}; JSONPath starts with '$', e.g. $.items[0].name",
            args.path
        ))
        .with_details(json!({"path": args.path}))
    })?;
    let (nodes, fan_out) = shape(&args.value);
    if nodes > JSON_QUERY_MAX_NODES {
        return Err(too_large(format!(
            "the value has {nodes} nodes, over the limit of {JSON_QUERY_MAX_NODES}; query a smaller part of it"
        )));
    }
    let cost = query_cost(&args.path, nodes, fan_out);
    if cost > JSON_QUERY_MAX_COST {
        return Err(too_large(format!(
            "the path {:?} could visit up to {cost} nodes of this value, over the limit of \
             {JSON_QUERY_MAX_COST}; use fewer '..' (descendant) segments and wildcards, or a smaller value",
            args.path
        ))
        .with_details(json!({"path": args.path, "estimated_nodes": cost, "limit": JSON_QUERY_MAX_COST})));
    }
    let matches = path.query(&args.value).all();
    if matches.len() > JSON_QUERY_MAX_MATCHES {
        return Err(too_large(format!(
            "the path {:?} matches {} values, over the limit of {JSON_QUERY_MAX_MATCHES}; narrow it",
            args.path,
            matches.len()
        )));
    }
    // Measured before anything is copied: a match may be a large subtree, many times over.
    let mut budget = Budget(JSON_QUERY_MAX_RESULT_BYTES);
    for m in &matches {
        if serde_json::to_writer(&mut budget, m).is_err() {
            return Err(too_large(format!(
                "the matches of {:?} are over {JSON_QUERY_MAX_RESULT_BYTES} bytes of JSON; narrow the path",
                args.path
            )));
        }
    }
    Ok(matches.into_iter().cloned().collect())
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

/// The number of nodes of `value` and the most children any node has.
fn shape(value: &Value) -> (u64, u64) {
    let mut nodes = 0u64;
    let mut fan_out = 1u64;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        nodes += 1;
        match v {
            Value::Array(a) => {
                fan_out = fan_out.max(a.len() as u64);
                stack.extend(a.iter());
            }
            Value::Object(o) => {
                fan_out = fan_out.max(o.len() as u64);
                stack.extend(o.values());
            }
            _ => {}
        }
    }
    (nodes, fan_out)
}

/// An upper bound of the nodes a JSONPath query visits over a value of `nodes` nodes
/// whose largest array or object has `fan_out` members, read from the path's text: each
/// descendant segment (`..`) may visit every node once per node it starts from; a
/// wildcard, a slice or a filter every member; a filter's own queries run once per
/// member; the selectors of a union add up. Quoted names count for nothing.
pub fn query_cost(path: &str, nodes: u64, fan_out: u64) -> u64 {
    let chars: Vec<char> = path.chars().collect();
    let mut i = 0;
    cost_of(&chars, &mut i, nodes.max(1), fan_out.max(1), None)
}

/// The cost of `chars[*i..]` up to `end` (a closing `]` or `)`), or to the end.
fn cost_of(chars: &[char], i: &mut usize, n: u64, f: u64, end: Option<char>) -> u64 {
    let mut cost = 1u64;
    while *i < chars.len() {
        let c = chars[*i];
        match c {
            '\'' | '"' => skip_string(chars, i),
            '.' if chars.get(*i + 1) == Some(&'.') => {
                cost = cost.saturating_mul(n);
                *i += 2;
                // `..*` is every descendant: already counted.
                if chars.get(*i) == Some(&'*') {
                    *i += 1;
                }
            }
            '.' if chars.get(*i + 1) == Some(&'*') => {
                cost = cost.saturating_mul(f);
                *i += 2;
            }
            '[' => {
                *i += 1;
                let union = bracket_cost(chars, i, n, f);
                cost = cost.saturating_mul(union);
            }
            '(' => {
                *i += 1;
                let inner = cost_of(chars, i, n, f, Some(')'));
                cost = cost.saturating_mul(inner);
            }
            _ if Some(c) == end => {
                *i += 1;
                return cost;
            }
            _ => *i += 1,
        }
    }
    cost
}

/// The cost of the selectors of a bracket, `*i` just past its `[`; leaves `*i` past
/// its `]`.
fn bracket_cost(chars: &[char], i: &mut usize, n: u64, f: u64) -> u64 {
    let mut total = 0u64;
    loop {
        // One selector, up to a top-level ',' or the closing ']'.
        while chars.get(*i).is_some_and(|c| c.is_whitespace()) {
            *i += 1;
        }
        let selector = match chars.get(*i) {
            None => return total.max(1),
            Some('?') => {
                *i += 1;
                f.saturating_mul(selector_rest(chars, i, n, f))
            }
            Some('*') => {
                *i += 1;
                f.saturating_mul(selector_rest(chars, i, n, f))
            }
            Some(_) => {
                let start = *i;
                let inner = selector_rest(chars, i, n, f);
                let slice = chars[start..*i].contains(&':');
                if slice {
                    f.saturating_mul(inner)
                } else {
                    inner
                }
            }
        };
        total = total.saturating_add(selector);
        match chars.get(*i) {
            Some(',') => *i += 1,
            Some(']') => {
                *i += 1;
                return total.max(1);
            }
            _ => return total.max(1),
        }
    }
}

/// The cost of the rest of one selector, stopping (without consuming) at a top-level
/// `,` or `]`.
fn selector_rest(chars: &[char], i: &mut usize, n: u64, f: u64) -> u64 {
    let mut cost = 1u64;
    while let Some(&c) = chars.get(*i) {
        match c {
            ',' | ']' => return cost,
            '\'' | '"' => skip_string(chars, i),
            '.' if chars.get(*i + 1) == Some(&'.') => {
                cost = cost.saturating_mul(n);
                *i += 2;
            }
            '[' => {
                *i += 1;
                cost = cost.saturating_mul(bracket_cost(chars, i, n, f));
            }
            '(' => {
                *i += 1;
                cost = cost.saturating_mul(cost_of(chars, i, n, f, Some(')')));
            }
            '*' => {
                cost = cost.saturating_mul(f);
                *i += 1;
            }
            _ => *i += 1,
        }
    }
    cost
}

/// Moves `*i` past the quoted string that starts there.
fn skip_string(chars: &[char], i: &mut usize) {
    let quote = chars[*i];
    *i += 1;
    while let Some(&c) = chars.get(*i) {
        *i += 1;
        if c == '\\' {
            *i += 1;
        } else if c == quote {
            return;
        }
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
