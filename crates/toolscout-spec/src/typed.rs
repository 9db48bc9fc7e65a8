//! The typed path: a [`ToolSpec`] from a Rust argument type that derives
//! [`schemars::JsonSchema`].

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::Value;

use crate::{Result, ToolSpec, ToolSpecBuilder};

/// The JSON Schema of `T`, as tools want it: subschemas inlined, no `$schema` or `title`.
///
/// Doc comments on the type and its fields become `description`s.
pub fn schema_for<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let schema = generator.into_root_schema_for::<T>();
    let mut value: Value = schema.into();
    if let Some(obj) = value.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
    }
    value
}

impl ToolSpec {
    /// Starts a spec whose parameters are the schema of `T`; the type's doc comment
    /// becomes the description.
    ///
    /// ```
    /// use schemars::JsonSchema;
    /// use toolscout_spec::ToolSpec;
    ///
    /// /// Reads a text file.
    /// #[derive(JsonSchema)]
    /// #[allow(dead_code)]
    /// struct ReadFile {
    ///     /// Path of the file, relative to the workspace.
    ///     file_path: String,
    ///     /// First line to read, from 1.
    ///     #[schemars(default = "one")]
    ///     offset: Option<u32>,
    /// }
    /// fn one() -> Option<u32> { Some(1) }
    ///
    /// let spec = ToolSpec::from_args::<ReadFile>("read_file", "Read a text file").build()?;
    /// assert_eq!(spec.description, "Reads a text file.");
    /// assert_eq!(spec.parameter_names(), ["file_path", "offset"]);
    /// assert!(spec.is_required("file_path"));
    /// assert_eq!(spec.usage(), r#"read_file(file_path="…", offset=1)"#);
    /// # Ok::<(), toolscout_spec::Error>(())
    /// ```
    pub fn from_args<T: JsonSchema>(
        name: impl Into<String>,
        summary: impl Into<String>,
    ) -> ToolSpecBuilder {
        let mut schema = schema_for::<T>();
        let description = schema
            .as_object_mut()
            .and_then(|o| o.remove("description"))
            .and_then(|d| d.as_str().map(str::to_owned));
        let mut builder = ToolSpec::builder(name, summary).parameters(schema);
        if let Some(d) = description {
            builder = builder.description(d);
        }
        builder
    }

    /// Sets the output schema to that of `T`.
    pub fn with_output<T: JsonSchema>(mut self) -> Result<Self> {
        self.output_schema = Some(schema_for::<T>());
        self.validate()?;
        Ok(self)
    }
}
