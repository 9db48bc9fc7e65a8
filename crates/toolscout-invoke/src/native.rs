//! Native tools: a typed trait ([`NativeTool`]) whose arguments type gives the schema,
//! and its object-safe form over JSON ([`DynTool`]) that the invoker stores.

use std::future::Future;
use std::pin::Pin;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use toolscout_spec::ToolSpec;

use crate::{ErrorKind, ToolError};

/// A boxed, sendable future: the only place futures are boxed is the `dyn` boundary.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A tool written in Rust, with typed arguments and output.
///
/// The spec's parameter schema comes from `Args` (its doc comments become
/// descriptions); the invoker validates the JSON arguments against it and then
/// deserialises them into `Args`.
///
/// ```
/// use schemars::JsonSchema;
/// use serde::Deserialize;
/// use toolscout_invoke::{NativeTool, ToolError};
///
/// /// Adds two numbers.
/// #[derive(Deserialize, JsonSchema)]
/// struct AddArgs {
///     /// First term.
///     a: i64,
///     /// Second term.
///     b: i64,
/// }
///
/// struct Add;
///
/// impl NativeTool for Add {
///     const NAME: &'static str = "add";
///     const SUMMARY: &'static str = "Add two integers";
///     type Args = AddArgs;
///     type Output = i64;
///
///     async fn call(&self, args: AddArgs) -> Result<i64, ToolError> {
///         args.a.checked_add(args.b).ok_or_else(|| ToolError::failed("the sum overflows"))
///     }
/// }
///
/// let spec = Add.spec().unwrap();
/// assert_eq!(spec.parameter_names(), ["a", "b"]);
/// assert_eq!(spec.description, "Adds two numbers.");
/// ```
pub trait NativeTool: Send + Sync + 'static {
    /// The tool's name (and the `func` of its `impl` block).
    const NAME: &'static str;
    /// The one-line summary of its spec.
    const SUMMARY: &'static str;
    /// The arguments.
    type Args: DeserializeOwned + JsonSchema + Send;
    /// The result.
    type Output: Serialize;

    /// The tool's spec; by default built from `Args`, `NAME` and `SUMMARY`. Override to
    /// add examples, notes or metadata.
    fn spec(&self) -> toolscout_spec::Result<ToolSpec> {
        ToolSpec::from_args::<Self::Args>(Self::NAME, Self::SUMMARY).build()
    }

    /// Runs the tool.
    fn call(
        &self,
        args: Self::Args,
    ) -> impl Future<Output = Result<Self::Output, ToolError>> + Send;
}

/// The object-safe form of a native tool, over JSON. Every [`NativeTool`] is one.
pub trait DynTool: Send + Sync {
    /// The name the tool is registered under.
    fn name(&self) -> &str;
    /// The tool's spec.
    fn spec(&self) -> toolscout_spec::Result<ToolSpec>;
    /// Runs the tool on JSON arguments (already validated against the schema).
    fn call_json(&self, args: Value) -> BoxFuture<'_, Result<Value, ToolError>>;
}

impl<T: NativeTool> DynTool for T {
    fn name(&self) -> &str {
        T::NAME
    }

    fn spec(&self) -> toolscout_spec::Result<ToolSpec> {
        NativeTool::spec(self)
    }

    fn call_json(&self, args: Value) -> BoxFuture<'_, Result<Value, ToolError>> {
        Box::pin(async move {
            let args: T::Args = serde_json::from_value(args).map_err(|e| {
                ToolError::invalid_arguments(format!(
                    "the arguments of '{}' do not fit its parameters: {e}",
                    T::NAME
                ))
            })?;
            let output = self.call(args).await?;
            serde_json::to_value(output).map_err(|e| {
                ToolError::new(
                    ErrorKind::ToolFailed,
                    format!("the result of '{}' is not JSON: {e}", T::NAME),
                )
                .with_details(json!({"tool": T::NAME}))
            })
        })
    }
}
