//! Just enough of a Rust lexer to read paths: identifiers and punctuation with their
//! lines; comments, strings, characters and lifetimes dropped.

/// One token: an identifier or keyword, `::`, or one punctuation character.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Token {
    pub(crate) text: String,
    pub(crate) line: usize,
}

impl Token {
    pub(crate) fn is(&self, text: &str) -> bool {
        self.text == text
    }

    pub(crate) fn is_ident(&self) -> bool {
        self.text
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
    }
}

/// The tokens of `source`. Doc comments are comments: an intra-doc link is not an import.
pub(crate) fn tokens(source: &str) -> Vec<Token> {
    let chars: Vec<char> = source.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            '\n' => {
                line += 1;
                i += 1;
            }
            c if c.is_whitespace() => i += 1,
            '/' if next == Some('/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if next == Some('*') => {
                // Block comments nest in Rust.
                let mut depth = 0;
                while i < chars.len() {
                    if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                        depth += 1;
                        i += 2;
                    } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        if chars[i] == '\n' {
                            line += 1;
                        }
                        i += 1;
                    }
                }
            }
            '"' => i = skip_string(&chars, i + 1, 0, &mut line),
            'r' | 'b' | 'c' if is_raw_string_start(&chars, i) => {
                let mut j = i + 1;
                if chars[j] == 'r' {
                    j += 1;
                }
                let mut hashes = 0;
                while chars[j] == '#' {
                    hashes += 1;
                    j += 1;
                }
                i = skip_string(&chars, j + 1, hashes, &mut line);
            }
            '\'' => {
                // A character literal ('x', '\n', '\u{..}') or a lifetime ('a).
                if next == Some('\\') {
                    i += 2;
                    while i < chars.len() && chars[i] != '\'' {
                        i += 1;
                    }
                    i += 1;
                } else if chars.get(i + 2) == Some(&'\'') {
                    i += 3;
                } else {
                    i += 1;
                    while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                        i += 1;
                    }
                }
            }
            c if c.is_alphabetic() || c == '_' => {
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                // A byte or C string's prefix is read with its string above; `r#ident`
                // is a raw identifier.
                let text: String = chars[start..i].iter().collect();
                out.push(Token { text, line });
            }
            c if c.is_ascii_digit() => {
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
            }
            ':' if next == Some(':') => {
                out.push(Token {
                    text: "::".into(),
                    line,
                });
                i += 2;
            }
            c => {
                out.push(Token {
                    text: c.to_string(),
                    line,
                });
                i += 1;
            }
        }
    }
    out
}

/// Whether a raw, byte or C string starts at `i` (`r"`, `r#"`, `b"`, `br"`, `c"`…).
fn is_raw_string_start(chars: &[char], i: usize) -> bool {
    // The prefix must not be the end of a longer identifier.
    if i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_') {
        return false;
    }
    let mut j = i + 1;
    if chars[i] != 'r' && chars.get(j) == Some(&'r') {
        j += 1;
    }
    let raw = chars[i] == 'r' || j == i + 2;
    if !raw {
        return chars.get(j) == Some(&'"');
    }
    while chars.get(j) == Some(&'#') {
        j += 1;
    }
    chars.get(j) == Some(&'"')
}

/// The index after the string whose body starts at `i`, closed by `"` and `hashes` `#`s.
fn skip_string(chars: &[char], mut i: usize, hashes: usize, line: &mut usize) -> usize {
    while i < chars.len() {
        match chars[i] {
            '\\' if hashes == 0 => i += 2,
            '"' if chars[i + 1..]
                .iter()
                .take(hashes)
                .filter(|&&c| c == '#')
                .count()
                == hashes =>
            {
                return i + 1 + hashes;
            }
            c => {
                if c == '\n' {
                    *line += 1;
                }
                i += 1;
            }
        }
    }
    i
}

#[cfg(test)]
mod tests {
    use super::tokens;

    fn check(source: &str) -> String {
        tokens(source)
            .iter()
            .map(|t| t.text.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn comments_strings_and_lifetimes_are_dropped() {
        assert_eq!(
            check(
                "/// [`crate::a`]\nuse crate::b; // crate::c\n/* /* crate::d */ */ fn f<'a>(x: &'a str) { \"crate::e\"; r#\"crate::\"f\"#; '\"'; b'x'; }"
            ),
            "use crate :: b ; fn f < > ( x : & str ) { ; ; ; b ; }"
        );
    }
}
