//! `json_query` and `clock`: pure tools without IO.

use chrono::{DateTime, Offset, SecondsFormat, Utc};
use chrono_tz::Tz;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use serde_json_path::JsonPath;
use toolscout_spec::ToolSpec;

use crate::{NativeTool, ToolError};

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
        let path = JsonPath::parse(&args.path).map_err(|e| {
            ToolError::invalid_arguments(format!(
                "path {:?} is not a valid JSONPath: {e}; JSONPath starts with '$', e.g. $.items[0].name",
                args.path
            ))
            .with_details(json!({"path": args.path}))
        })?;
        Ok(path.query(&args.value).all().into_iter().cloned().collect())
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
