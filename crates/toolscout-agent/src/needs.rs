//! The needs of a request: the parts of one message that each ask for something, so
//! that retrieval searches for each instead of for the whole text at once.
//!
//! **Rationale:** "Plan a drive through three parks with times and distances, and also
//! give the 2-hour reach around each park" searched as one text finds tools for one of
//! its needs at best: the words and the meaning of the other are diluted by it. Query
//! planning for tool retrieval (TOOLQP, 2026; Retrieve–Plan–Select, 2026) searches each
//! sub-task instead. The split here is cheap and lexical: sentences, the connectives
//! that start another request ("also", "additionally", "then", "after that",
//! "finally"), list items and lines. It never splits inside a sentence at a plain "and"
//! ("times and distances" is one need). A piece too short to ask for anything, made
//! only of greetings, thanks and offers of help ("Can you help me with that?"), or
//! stating values ("The call lasted for 31 seconds.") joins its neighbour; so does a
//! statement of the asker's right before the question it sets up ("I'm looking to
//! improve my website's ranking. Can you boost my SEO?").
//!
//! These rules are English, and run only for a message in English (see
//! [`crate::language`]): in any other language a message is one need, searched whole.

/// Most needs one message is split into; the rest stays with the last.
pub const MAX_NEEDS: usize = 5;

/// A piece of a message: a sentence, or part of one cut at a connective.
struct Piece {
    text: String,
    /// It is a whole sentence, not cut at a connective.
    whole: bool,
    /// It is the start of a question (not after a connective) that holds no connective:
    /// what a statement of the asker's before it sets up (see [`sets_up`]).
    asks_one_thing: bool,
}

/// Fewest words of a need: a shorter piece ("Thanks!", "Then:") joins its neighbour.
const MIN_WORDS: usize = 3;

/// Words that ask for nothing by themselves: greetings, thanks, offers and requests of
/// help, pronouns and the small words of a sentence. A piece made only of them ("Can you
/// help me with that?", "Thank you for your help.", "I need your help with a few
/// things.") is not a need: searched alone it finds a tool at random, and following it
/// up costs a request. It joins its neighbour, as a short piece does.
const FILLER: [&str; 140] = [
    "a",
    "about",
    "afternoon",
    "ai",
    "also",
    "am",
    "an",
    "and",
    "any",
    "anything",
    "are",
    "assist",
    "assistance",
    "assistant",
    "assisting",
    "at",
    "be",
    "been",
    "being",
    "bot",
    "but",
    "by",
    "can",
    "chatbot",
    "could",
    "couple",
    "d",
    "dear",
    "did",
    "do",
    "does",
    "doing",
    "evening",
    "few",
    "following",
    "for",
    "from",
    "get",
    "give",
    "good",
    "greetings",
    "had",
    "has",
    "have",
    "hello",
    "help",
    "helping",
    "helps",
    "here",
    "hey",
    "hi",
    "hope",
    "hoping",
    "how",
    "i",
    "if",
    "in",
    "is",
    "it",
    "its",
    "just",
    "kindly",
    "like",
    "ll",
    "looking",
    "love",
    "m",
    "may",
    "me",
    "might",
    "mine",
    "morning",
    "multiple",
    "must",
    "my",
    "myself",
    "need",
    "needed",
    "needs",
    "now",
    "of",
    "offer",
    "on",
    "or",
    "our",
    "ours",
    "out",
    "please",
    "possible",
    "provide",
    "question",
    "questions",
    "re",
    "really",
    "request",
    "s",
    "several",
    "shall",
    "should",
    "sir",
    "so",
    "some",
    "something",
    "stuff",
    "support",
    "t",
    "task",
    "tasks",
    "thank",
    "thanks",
    "that",
    "the",
    "there",
    "these",
    "thing",
    "things",
    "this",
    "those",
    "to",
    "too",
    "up",
    "us",
    "ve",
    "very",
    "want",
    "wanted",
    "wants",
    "was",
    "we",
    "were",
    "what",
    "will",
    "with",
    "wonder",
    "wondering",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
];

/// Connectives that start another request inside a sentence, lower case, each
/// preceded by a comma or "and" (or by both, e.g. ", and also").
const CONNECTIVES: [&str; 8] = [
    "also",
    "additionally",
    "in addition",
    "then",
    "after that",
    "afterwards",
    "finally",
    "lastly",
];

/// The needs of `message`, in order: one element (the message, trimmed) when it asks
/// for one thing, at most [`MAX_NEEDS`]. The rules are the language's
/// ([`Language::split_needs`](crate::language::Language::split_needs)): a message in a
/// language without them (any but English so far) is one need.
///
/// ```
/// use toolscout_agent::needs::split_needs;
///
/// assert_eq!(
///     split_needs("Plan a drive through three parks with times and distances, and also give the 2-hour reach around each park."),
///     ["Plan a drive through three parks with times and distances", "give the 2-hour reach around each park."]
/// );
/// assert_eq!(split_needs("What's the weather in Oslo?"), ["What's the weather in Oslo?"]);
/// assert_eq!(split_needs("Hallo! Kannst du mir helfen? Such mir einen Flug."), ["Hallo! Kannst du mir helfen? Such mir einen Flug."]);
/// ```
pub fn split_needs(message: &str) -> Vec<String> {
    crate::language::detect(message)
        .split_needs(message)
        .unwrap_or_else(|| vec![message.trim().to_owned()])
}

/// [`split_needs`] by the English rules (see the [module docs](self)).
pub(crate) fn english_needs(message: &str) -> Vec<String> {
    let mut pieces: Vec<Piece> = Vec::new();
    for line in message.lines() {
        let line = strip_list_marker(line.trim());
        for sentence in sentences(line) {
            let sentence = sentence.trim();
            let cut = at_connectives(sentence);
            let whole = cut.len() == 1 && cut[0] == sentence;
            // The first piece of a question that does not start with a connective.
            let opens_question = sentence.ends_with('?')
                && cut
                    .first()
                    .is_some_and(|first| sentence.starts_with(first.as_str()));
            pieces.extend(cut.into_iter().enumerate().map(|(i, text)| Piece {
                asks_one_thing: opens_question && i == 0 && !holds_connective(&text),
                text,
                whole,
            }));
        }
    }
    // What comes before the enumeration's opener sets it up: one need with the first item.
    if let Some(k) = pieces.iter().position(|p| opens_enumeration(&p.text))
        && k > 0
    {
        let first: Vec<&str> = pieces[..=k].iter().map(|p| p.text.as_str()).collect();
        let first = Piece {
            text: first.join(" "),
            whole: false,
            asks_one_thing: false,
        };
        pieces.splice(..=k, [first]);
    }
    // A statement of the asker's right before the question it sets up: one need.
    let mut k = 0;
    while k + 1 < pieces.len() {
        if pieces[k + 1].asks_one_thing && sets_up(&pieces[k].text) {
            let question = pieces.remove(k + 1);
            pieces[k].text.push(' ');
            pieces[k].text.push_str(&question.text);
        }
        k += 1;
    }
    // Pieces that ask for nothing of their own join the one before (or after, for the
    // first); each need keeps whether it starts with a whole sentence.
    let mut needs: Vec<(String, bool)> = Vec::new();
    for Piece { text, whole, .. } in pieces {
        let piece = text.trim();
        if piece.is_empty() || asks_for_quality(piece) {
            continue;
        }
        match needs.last_mut() {
            Some((last, last_whole))
                if joins_neighbour(piece, whole)
                    || joins_neighbour(last, *last_whole)
                    || leads_in(last) =>
            {
                last.push(' ');
                last.push_str(piece);
            }
            _ => needs.push((piece.to_owned(), whole)),
        }
    }
    let mut needs: Vec<String> = needs.into_iter().map(|(need, _)| need).collect();
    if needs.len() > MAX_NEEDS {
        let rest = needs.split_off(MAX_NEEDS - 1).join(" ");
        needs.push(rest);
    }
    if needs.len() <= 1 {
        return vec![message.trim().to_owned()];
    }
    needs
}

/// The sentences of a line: [`toolscout_search::analyzer::sentences`], each also cut
/// after a full stop and a space before a lower-case word that opens a request
/// ([`OPENERS_LOWER`]: "find flights to oslo. also book a hotel", "I'd like a movie. will
/// you find me one") unless the word before the full stop is an abbreviation ("e.g.
/// this", "Dr. who": a word with a full stop inside, one letter, or one of
/// [`ABBREVIATIONS`]).
///
/// **Rationale:** any lower-case word after a full stop cut 32 of the 2,501 BFCL
/// requests, a third of them wrongly ("Super Mario Bros. game from 1985", "3000 sq ft. in
/// New York", "at 3 Below Theaters and Lounge. in San Jose, CA"); a word that opens a
/// request cuts the ones that start another request.
pub(crate) fn sentences(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for sentence in toolscout_search::analyzer::sentences(line) {
        let mut start = 0;
        for (at, _) in sentence.match_indices(". ") {
            let next = sentence[at + 2..].chars().next();
            let before = sentence[start..at]
                .rsplit(char::is_whitespace)
                .next()
                .unwrap_or_default();
            let abbreviation = before.contains('.')
                || before.chars().count() <= 1
                || ABBREVIATIONS.contains(&before.to_lowercase().as_str());
            let next_word = sentence[at + 2..]
                .split(|c: char| !c.is_alphanumeric())
                .next()
                .unwrap_or_default();
            let opens = next.is_some_and(char::is_lowercase)
                && OPENERS_LOWER.binary_search(&next_word).is_ok();
            if opens && !abbreviation {
                out.push(&sentence[start..=at]);
                start = at + 2;
            }
        }
        out.push(&sentence[start..]);
    }
    out
}

/// Words whose full stop marks an abbreviation, not the end of a sentence, lower case.
const ABBREVIATIONS: [&str; 32] = [
    "approx", "bros", "ca", "cf", "co", "corp", "dept", "dr", "eg", "esp", "est", "etc", "fig",
    "ft", "ie", "inc", "incl", "jr", "ltd", "mr", "mrs", "ms", "mt", "no", "nos", "sq", "sr", "st",
    "viz", "vol", "vs", "wt",
];

/// Lower-case words that open a request after a full stop: connectives, modals and
/// question words, and the verbs requests start with. Sorted.
const OPENERS_LOWER: [&str; 28] = [
    "additionally",
    "also",
    "book",
    "can",
    "check",
    "could",
    "finally",
    "find",
    "get",
    "give",
    "help",
    "how",
    "i",
    "lastly",
    "list",
    "please",
    "search",
    "show",
    "tell",
    "then",
    "what",
    "when",
    "where",
    "which",
    "who",
    "why",
    "will",
    "would",
];

/// Words that open an enumeration of requests, lower case, with what must follow them
/// ("First, …" but not "First class seats…").
const OPENERS: [(&str, &[char]); 5] = [
    ("first of all", &[',', ' ']),
    ("firstly", &[',', ' ']),
    ("first", &[',']),
    ("to start", &[',']),
    ("to begin", &[',']),
];

/// Whether `piece` opens an enumeration: what is said before it ("I need your help with
/// a few things. First, …", "I have two points, A and B. First, …") introduces the
/// requests and gives their values, and is not one of them.
fn opens_enumeration(piece: &str) -> bool {
    let lower = piece.trim_start().to_lowercase();
    OPENERS.iter().any(|(opener, then)| {
        lower
            .strip_prefix(opener)
            .is_some_and(|rest| rest.starts_with(*then))
    })
}

/// Whether `piece` is not a need of its own but part of its neighbour: too short, made
/// only of [`FILLER`] words or of no word at all (numbers and signs: a row of a matrix,
/// a list of readings), or a whole sentence (`whole`: not cut at a connective) stating
/// values ([`states_values`]).
fn joins_neighbour(piece: &str, whole: bool) -> bool {
    words(piece) < MIN_WORDS
        || asks_nothing(piece)
        || !piece.chars().any(char::is_alphabetic)
        || (whole && states_values(piece))
}

/// Whether `piece` leads in to what follows it ("Here's what I've got:", "I'd love to
/// know:"): it ends with a colon, and the piece after it is part of the same need.
///
/// **Rationale:** searched alone, a lead-in finds a tool at random ("Here's what I've
/// got:" → a Reddit feed), and following it up makes the model call that tool; the
/// list after it holds the need.
fn leads_in(piece: &str) -> bool {
    piece.trim_end().ends_with(':')
}

/// Words that say how well-founded the answer must be ("concrete data", "verifiable
/// sources", "not guesses") rather than what to do, sorted.
const QUALITY: [&str; 39] = [
    "accurate",
    "actual",
    "all",
    "backed",
    "concrete",
    "data",
    "detail",
    "details",
    "ensure",
    "evidence",
    "fact",
    "facts",
    "figures",
    "findings",
    "generalizations",
    "guess",
    "guesses",
    "guesswork",
    "hard",
    "make",
    "no",
    "not",
    "numbers",
    "only",
    "precise",
    "proof",
    "real",
    "reliable",
    "solid",
    "source",
    "sourced",
    "sources",
    "specific",
    "supported",
    "sure",
    "trustworthy",
    "vague",
    "verifiable",
    "verified",
];

/// Whether `piece` only asks that the answer be well-founded: every word is a
/// [`FILLER`] or [`QUALITY`] word, and one of them says what the answer rests on
/// ("Please ensure all findings are supported by concrete data and verifiable
/// sources.", "I need specific numbers and evidence, not generalizations."). It is no
/// need of its own and is left out of the needs (the model reads it in the message).
///
/// **Rationale:** searched alone, such a sentence finds whatever tool speaks of data or
/// thoughts (a units list, a "think" tool), and following it up makes the model call
/// it: of the 354 needs split from the 71 MCP-Bench requests, 5 were such sentences, and
/// none found a tool the task used (none of the needs of 300 requests each of BFCL,
/// MetaTool and Seal-Tools is one). Joined to a neighbour, its words would pull that
/// need's search the same way.
fn asks_for_quality(piece: &str) -> bool {
    let mut quality = false;
    for word in lower_words(piece) {
        if QUALITY.binary_search(&word.as_str()).is_ok() {
            quality = true;
        } else if FILLER.binary_search(&word.as_str()).is_err() {
            return false;
        }
    }
    quality
}

/// First words of a sentence that states a fact about a thing rather than asking for
/// something: "The dataset contains missing values represented as 'NaN'.", "Its
/// platform will be Windows." (not "I", "we": "I am interested in…" is how people ask).
const THING_SUBJECTS: [&str; 11] = [
    "her", "his", "it", "its", "our", "that", "the", "their", "these", "this", "those",
];

/// Words that turn a sentence about a thing into a request ("The report, please.").
const ASKING: [&str; 3] = ["kindly", "please", "you"];

/// Words that, after a [`THING_SUBJECTS`] word, name another instance of what came
/// before ("The second equation is 5x^2 - 7x + 3 = 0.", "The other car starts at
/// rest."): such a sentence asks for the same thing again with its own values, a need
/// of its own. "The first …" gives the values of the need it follows.
const ANOTHER: [&str; 6] = ["fifth", "fourth", "next", "other", "second", "third"];

/// Whether `piece` states values for a need rather than being one: it starts with a
/// [`THING_SUBJECTS`] word not followed by an [`ANOTHER`] word, is not a question and
/// holds no [`ASKING`] word. ("The call lasted for 31 seconds." gives the duration the
/// need before it asks to log.)
///
/// **Rationale:** followed up as a need of its own, such a sentence makes the model call
/// whatever tool its words match best ("The HTML code starts with the <body> tag." →
/// `getHTML`); on Seal-Tools 9 of the 48 follow-ups that called no expected tool were
/// these, and none of the 105 that did.
fn states_values(piece: &str) -> bool {
    statement(piece, &THING_SUBJECTS).is_some_and(|rest| {
        rest.first()
            .is_some_and(|second| ANOTHER.binary_search(&second.as_str()).is_err())
    })
}

/// The words of `piece` after its first when it is a statement whose first word is one
/// of `subjects` (sorted): not a question, and no [`ASKING`] word after the first.
fn statement(piece: &str, subjects: &[&str]) -> Option<Vec<String>> {
    if piece.contains('?') {
        return None;
    }
    let mut words = lower_words(piece);
    let first = words.next()?;
    subjects.binary_search(&first.as_str()).ok()?;
    let rest: Vec<String> = words.collect();
    rest.iter()
        .all(|w| ASKING.binary_search(&w.as_str()).is_err())
        .then_some(rest)
}

/// First words of a statement the asker makes about themselves: "I'm", "I've", "we",
/// "my" (`lower_words` cuts "I'm" into "i" and "m").
const ASKER_SUBJECTS: [&str; 4] = ["i", "my", "our", "we"];

/// Whether `piece` is a statement of the asker's that sets up a question after it ("I'm
/// looking to improve my website's ranking.", "I'm so excited to be going to Australia
/// for my honeymoon!"): it starts with an [`ASKER_SUBJECTS`] word, is not a question and
/// holds no [`ASKING`] word ("I'd like you to book a flight." asks).
///
/// **Rationale:** split off as a need of its own, such a sentence is followed up after
/// the question's call, and the model calls whatever its words match ("I'm interested in
/// buying a house, but I need to be aware of the current market trends." → `Now`, a
/// clock; "I'm interested in exploring Offbeat movies starring Inbal Amirav." → a doctor
/// finder). Of the 50 dev requests each of MetaTool, BFCL and Seal-Tools, the 13 this
/// rule changes made the same or more right calls with it (Seal-Tools: 3 of 5 complete,
/// against 2) at 15–73 % fewer prompt tokens; over all 26,000 dev requests it changes
/// 3,770 splits, 3,660 of them nearer the number of tools the request needs, 95 farther.
fn sets_up(piece: &str) -> bool {
    statement(piece, &ASKER_SUBJECTS).is_some()
}

/// Words that, inside a question, say that it asks for another thing besides what came
/// before ("Can you also find a hotel?", "… the tax information of the city as well?").
const ANOTHER_THING: [&str; 2] = ["also", "as well"];

/// Whether `piece` holds a [`CONNECTIVES`] or [`ANOTHER_THING`] word or phrase.
fn holds_connective(piece: &str) -> bool {
    let lower = piece.to_lowercase();
    CONNECTIVES.iter().chain(&ANOTHER_THING).any(|connective| {
        lower.match_indices(connective).any(|(at, _)| {
            let before = lower[..at].chars().next_back();
            let after = lower[at + connective.len()..].chars().next();
            before.is_none_or(|c| !c.is_alphanumeric())
                && after.is_none_or(|c| !c.is_alphanumeric())
        })
    })
}

/// Whether every word of `piece` is a [`FILLER`] word (and it has one).
fn asks_nothing(piece: &str) -> bool {
    let mut words = lower_words(piece).peekable();
    words.peek().is_some() && words.all(|w| FILLER.binary_search(&w.as_str()).is_ok())
}

/// The words of `piece` (runs of letters and digits), lower-cased.
pub(crate) fn lower_words(piece: &str) -> impl Iterator<Item = String> + '_ {
    piece
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

fn words(text: &str) -> usize {
    text.split_whitespace().count()
}

/// A line without its list marker: `1.`, `2)`, `-`, `*`, `•`.
fn strip_list_marker(line: &str) -> &str {
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && digits <= 2 {
        let rest = &line[digits..];
        if let Some(rest) = rest.strip_prefix(['.', ')'])
            && rest.starts_with(char::is_whitespace)
        {
            return rest.trim_start();
        }
    }
    for marker in ["- ", "* ", "• "] {
        if let Some(rest) = line.strip_prefix(marker) {
            return rest.trim_start();
        }
    }
    line
}

/// A sentence cut before each connective that starts another request (", and also",
/// ", then", "and finally"…), the connective dropped; a sentence that starts with one
/// loses it too.
fn at_connectives(sentence: &str) -> Vec<String> {
    let lower = sentence.to_lowercase();
    // `to_lowercase` can change byte offsets (a few letters grow); cut only when it did
    // not, else keep the sentence whole.
    if lower.len() != sentence.len() {
        return vec![sentence.to_owned()];
    }
    let mut cuts: Vec<(usize, usize)> = Vec::new();
    for connective in CONNECTIVES {
        for lead in [", and ", ", ", " and ", "; "] {
            let pattern = format!("{lead}{connective}");
            let mut from = 0;
            while let Some(found) = lower[from..].find(&pattern) {
                let at = from + found;
                let end = at + pattern.len();
                // A whole word: "then" is not "thence", "also" not "alsoft".
                let whole = lower[end..]
                    .chars()
                    .next()
                    .is_none_or(|c| !c.is_alphanumeric());
                if whole {
                    cuts.push((at, end));
                }
                from = end;
            }
        }
    }
    cuts.sort_unstable();
    let mut out = Vec::new();
    let mut start = strip_leading_connective(&lower, 0);
    let mut last_end = 0;
    for (at, end) in cuts {
        if at < last_end || at < start {
            continue;
        }
        out.push(sentence[start..at].trim().to_owned());
        start = skip_comma(&lower, end);
        last_end = end;
    }
    out.push(sentence[start..].trim().to_owned());
    out.retain(|p| !p.is_empty());
    out
}

/// Where the text starts after a leading connective ("Additionally, I would like…").
fn strip_leading_connective(lower: &str, from: usize) -> usize {
    for connective in CONNECTIVES {
        if let Some(rest) = lower[from..].strip_prefix(connective)
            && rest.starts_with([',', ' '])
        {
            return skip_comma(lower, from + connective.len());
        }
    }
    from
}

/// Past a comma and spaces at `at`.
fn skip_comma(lower: &str, at: usize) -> usize {
    let rest = &lower[at..];
    let trimmed = rest.trim_start_matches([',', ' ', ':']);
    at + (rest.len() - trimmed.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_need_stays_whole() {
        for message in [
            "What's the weather in Oslo?",
            "Find flights from Paris to Rome with times and prices",
            "Convert 3.5 km to miles, e.g. for my run.",
            "",
        ] {
            assert_eq!(split_needs(message), [message.trim()], "{message}");
        }
    }

    #[test]
    fn sentences_connectives_and_lists_split() {
        assert_eq!(
            split_needs(
                "I need some information about Islamic finance. Please retrieve the information about the Murabaha product. Then, retrieve the data about the Great Artesian Basin aquifer. Finally, get the current price of Bitcoin."
            ),
            [
                "I need some information about Islamic finance.",
                "Please retrieve the information about the Murabaha product.",
                "retrieve the data about the Great Artesian Basin aquifer.",
                "get the current price of Bitcoin."
            ]
        );
        assert_eq!(
            split_needs("Book a table for two tonight and then send the address to Ana"),
            ["Book a table for two tonight", "send the address to Ana"]
        );
        assert_eq!(
            split_needs(
                "Please do:\n1. look up the ISBN of Dune\n2) find its reviews\n- and the author's age"
            ),
            [
                "Please do: look up the ISBN of Dune",
                "find its reviews",
                "and the author's age"
            ]
        );
    }

    #[test]
    fn what_comes_before_first_joins_the_first_need() {
        assert_eq!(
            split_needs(
                "I need your help with multiple tasks. Firstly, analyze the audio file a.mp3. Then, compare the fingerprint in b.bmp."
            ),
            [
                "I need your help with multiple tasks. Firstly, analyze the audio file a.mp3.",
                "compare the fingerprint in b.bmp."
            ]
        );
        assert_eq!(
            split_needs(
                "I have two points, A at [3, 2] and B at [7, 5]. First, give their Euclidean distance. Then, the angle between them."
            ),
            [
                "I have two points, A at [3, 2] and B at [7, 5]. First, give their Euclidean distance.",
                "the angle between them."
            ]
        );
        // Only an opener at the start of a sentence: "first-class" and "at first" do not.
        assert_eq!(
            split_needs("Book a first class seat to Rome. Then, rent a car at first light."),
            [
                "Book a first class seat to Rome.",
                "rent a car at first light."
            ]
        );
    }

    #[test]
    fn short_pieces_join_their_neighbour_and_the_count_is_capped() {
        assert_eq!(
            split_needs("Thanks! Get the weather in Oslo."),
            ["Thanks! Get the weather in Oslo."]
        );
        let many: String = (1..=8)
            .map(|i| format!("Find the population of city number {i}. "))
            .collect();
        let needs = split_needs(&many);
        assert_eq!(needs.len(), MAX_NEEDS);
        assert!(needs[MAX_NEEDS - 1].contains("number 8"), "{needs:?}");
    }

    #[test]
    fn a_piece_that_asks_for_nothing_joins_its_neighbour() {
        assert_eq!(
            split_needs(
                "Hey Chatbot! I need your help. I'll be driving on South Terrace today, can you check for speed cameras on that road?"
            ),
            [
                "Hey Chatbot! I need your help. I'll be driving on South Terrace today, can you check for speed cameras on that road?"
            ]
        );
        assert_eq!(
            split_needs(
                "I need your help with a few things. Get the weather in Oslo. Then, book a table for two. Thank you for your help."
            ),
            [
                "I need your help with a few things. Get the weather in Oslo.",
                "book a table for two. Thank you for your help."
            ]
        );
        // One word that asks for something keeps the piece a need.
        assert_eq!(
            split_needs("Get the weather in Oslo. Can you give me a summary of it?"),
            [
                "Get the weather in Oslo.",
                "Can you give me a summary of it?"
            ]
        );
    }

    #[test]
    fn a_sentence_that_states_values_joins_the_need_it_gives_them_to() {
        assert_eq!(
            split_needs(
                "Log a call with Ana. The call lasted for 31 seconds. Then, clean the dataset 'sales'. The dataset contains missing values represented as 'NaN'."
            ),
            [
                "Log a call with Ana. The call lasted for 31 seconds.",
                "clean the dataset 'sales'. The dataset contains missing values represented as 'NaN'."
            ]
        );
        // First: it joins the need after it.
        assert_eq!(
            split_needs("The platform will be Windows. Create a desktop app called Notes."),
            ["The platform will be Windows. Create a desktop app called Notes."]
        );
        // Another instance of the same thing is a need of its own.
        assert_eq!(
            split_needs(
                "Find the roots of two quadratic equations. The first equation is 3x^2 + 4x + 2 = 0. The second equation is 5x^2 - 7x + 3 = 0."
            ),
            [
                "Find the roots of two quadratic equations. The first equation is 3x^2 + 4x + 2 = 0.",
                "The second equation is 5x^2 - 7x + 3 = 0."
            ]
        );
        // A question, "please" or "you" makes it a request; "I" is how people ask.
        for asking in [
            "The weather in Oslo tomorrow?",
            "The price of Bitcoin, please.",
            "It would help if you also got the price of Bitcoin.",
            "I am also interested in the price of Bitcoin.",
        ] {
            let message = format!("Get the weather in Oslo. {asking}");
            assert_eq!(split_needs(&message).len(), 2, "{message}");
        }
    }

    #[test]
    fn a_statement_of_the_askers_joins_the_question_it_sets_up() {
        for message in [
            "I'm looking to improve my website's search engine ranking. Can you help me boost my SEO strategy with in-depth analysis?",
            "I'm so excited to be going to Australia for my honeymoon! What are some unique experiences I can have there?",
            "We have a meeting in Oslo on Friday. What will the weather be?",
        ] {
            assert_eq!(split_needs(message), [message], "{message}");
        }
        // The first part of a question cut at a connective is set up too; the part after
        // the connective is another need.
        assert_eq!(
            split_needs(
                "I'm interested in buying a house, but I need to know the market trends. Can you find news on real estate, and then recommend some affordable neighborhoods?"
            ),
            [
                "I'm interested in buying a house, but I need to know the market trends. Can you find news on real estate",
                "recommend some affordable neighborhoods?"
            ]
        );
        // Not when the question starts with a connective or says it asks for another
        // thing, when the statement asks ("you", "please") or is about a thing, or when
        // what follows is not a question.
        for message in [
            "I want the COVID-19 cases in the world. Then, can you give me details about the United States?",
            "I want the fashion history of New Orleans. Can you give me the tax information of the city as well?",
            "I want the fashion history of New Orleans. Can you also give me its tax information?",
            "I'd like you to book a flight to Paris. Could you find a hotel there?",
            "Get the weather in Oslo. Can you give me a summary of it?",
            "I need the weather in Oslo. Book a table for two at eight.",
        ] {
            assert_eq!(split_needs(message).len(), 2, "{message}");
        }
    }

    #[test]
    fn a_lead_in_joins_what_follows_and_rows_of_numbers_join_their_need() {
        assert_eq!(
            split_needs(
                "I need to check some readings against their thresholds. Here's what I've got:\n- Inlet temperature: 350 °F\n- Line pressure: 45 psi"
            ),
            [
                "I need to check some readings against their thresholds.",
                "Here's what I've got: Inlet temperature: 350 °F",
                "Line pressure: 45 psi"
            ]
        );
        assert_eq!(
            split_needs(
                "Invert this matrix for me:\n[4, 2, 1;\n0, 3, -1;\n2, 1, 5]\nThen plot its eigenvalues."
            ),
            [
                "Invert this matrix for me: [4, 2, 1; 0, 3, -1; 2, 1, 5]",
                "plot its eigenvalues."
            ]
        );
    }

    #[test]
    fn a_sentence_that_only_asks_for_solid_evidence_is_no_need() {
        assert_eq!(
            split_needs(
                "Find the cheapest flight to Oslo. Then book a hotel near the station. Please ensure all findings are supported by concrete data and verifiable sources. I need specific numbers and evidence, not generalizations."
            ),
            [
                "Find the cheapest flight to Oslo.",
                "book a hotel near the station."
            ]
        );
        // A sentence that asks for something besides is a need.
        assert_eq!(
            split_needs(
                "Find the cheapest flight to Oslo. I need the real prices of its hotels, not guesses."
            ),
            [
                "Find the cheapest flight to Oslo.",
                "I need the real prices of its hotels, not guesses."
            ]
        );
    }

    #[test]
    fn word_lists_are_sorted_and_lower_case() {
        for list in [
            &FILLER[..],
            &ABBREVIATIONS,
            &OPENERS_LOWER,
            &THING_SUBJECTS,
            &ASKING,
            &ANOTHER,
            &ASKER_SUBJECTS,
            &QUALITY,
        ] {
            assert!(list.is_sorted(), "binary_search needs {list:?} sorted");
            assert!(
                list.iter()
                    .all(|w| w.chars().all(|c| c.is_ascii_lowercase()))
            );
        }
    }

    #[test]
    fn a_full_stop_before_lower_case_ends_a_sentence() {
        assert_eq!(
            split_needs("find flights to oslo. also book a hotel"),
            ["find flights to oslo.", "book a hotel"]
        );
        assert_eq!(
            split_needs("find flights to oslo. book a hotel near the airport"),
            ["find flights to oslo.", "book a hotel near the airport"]
        );
        // Abbreviations do not end one, nor does a full stop before words that go on
        // with the request.
        for message in [
            "Find snacks, e.g. nuts, and list their prices",
            "Convert approx. five miles to km for the race",
            "Compare the stocks of Apple vs. microsoft over a year",
            "Find a book by J. r. r. tolkien in the library",
            "Find the value of a vintage Super Mario Bros. game from 1985 like new.",
            "I want to watch a War film at 3 Below Theaters and Lounge. in San Jose, CA",
        ] {
            assert_eq!(split_needs(message), [message], "{message}");
        }
    }

    #[test]
    fn a_message_in_a_language_without_rules_is_one_need() {
        for message in [
            "Hallo! Kannst du mir helfen? Such mir einen Flug nach Oslo.",
            "Busca vuelos a Oslo. Luego reserva un hotel, y también alquila un coche.",
            "Trouve des vols pour Oslo. Ensuite, réserve un hôtel.",
            "帮我查一下去奥斯陆的航班。然后预订一家酒店。",
        ] {
            assert_eq!(split_needs(message), [message], "{message}");
        }
    }

    #[test]
    fn words_that_only_contain_a_connective_do_not_split() {
        assert_eq!(
            split_needs("Show the Thenardier family tree, and alsoft lyrics"),
            ["Show the Thenardier family tree, and alsoft lyrics"]
        );
    }
}
