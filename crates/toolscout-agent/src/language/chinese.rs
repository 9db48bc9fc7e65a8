//! Chinese: grounding (numerals, relative days; `.` is the decimal mark).

use super::Language;
use super::numbers::point_digits;

/// Chinese: numbers and days for grounding; no rules for needs or claims.
#[derive(Debug, Default, Clone, Copy)]
pub struct Chinese;

/// Words that name a day without its date (found anywhere in the text: Chinese is
/// written without spaces).
const RELATIVE_DAYS: [&str; 24] = [
    "今天",
    "今晚",
    "明天",
    "明晚",
    "后天",
    "後天",
    "昨天",
    "前天",
    "星期",
    "礼拜",
    "禮拜",
    "周一",
    "周二",
    "周三",
    "周四",
    "周五",
    "周六",
    "周日",
    "周末",
    "下周",
    "本周",
    "这周",
    "月底",
    "下个月",
];

impl Language for Chinese {
    fn code(&self) -> &'static str {
        "zh"
    }

    fn numbers(&self, text: &str) -> Option<Vec<f64>> {
        let mut out = Vec::new();
        let ascii: String = text.chars().map(half_width).collect();
        point_digits(&ascii, &mut out);
        let mut run = String::new();
        for c in text.chars().chain(std::iter::once(' ')) {
            if numeral(c).is_some() || matches!(c, '点' | '點') && !run.is_empty() {
                run.push(c);
            } else if !run.is_empty() {
                out.extend(read_numerals(&run));
                run.clear();
            }
        }
        // "半" is a half after a numeral or "个" ("一个半小时"), or before a unit ("半小时",
        // "半公斤"); not in "半径" (radius).
        let chars: Vec<char> = text.chars().collect();
        for (k, c) in chars.iter().enumerate() {
            let after = k
                .checked_sub(1)
                .and_then(|k| chars.get(k))
                .is_some_and(|p| numeral(*p).is_some() || *p == '个');
            let before = chars.get(k + 1).is_some_and(|n| {
                matches!(n, '个' | '小' | '天' | '年' | '公' | '斤' | '杯' | '价')
            });
            if *c == '半' && (after || before) {
                out.push(0.5);
            }
        }
        Some(out)
    }

    fn names_day(&self, text: &str) -> bool {
        RELATIVE_DAYS.iter().any(|day| text.contains(day))
    }

    fn writes_latin(&self) -> bool {
        false
    }
}

/// A full-width digit, comma or full stop as its ASCII form ("１２" is "12").
fn half_width(c: char) -> char {
    match c {
        '０'..='９' => char::from_u32(c as u32 - '０' as u32 + '0' as u32).unwrap_or(c),
        '．' => '.',
        _ => c,
    }
}

/// What one numeral character is: a digit (0–9) or a unit (10, 100, 1,000, 10,000,
/// 100,000,000).
fn numeral(c: char) -> Option<f64> {
    Some(match c {
        '零' | '〇' => 0.0,
        '一' | '壹' => 1.0,
        '二' | '两' | '兩' | '贰' => 2.0,
        '三' | '叁' => 3.0,
        '四' | '肆' => 4.0,
        '五' | '伍' => 5.0,
        '六' | '陆' => 6.0,
        '七' | '柒' => 7.0,
        '八' | '捌' => 8.0,
        '九' | '玖' => 9.0,
        '十' | '拾' => 10.0,
        '百' | '佰' => 100.0,
        '千' | '仟' => 1000.0,
        '万' | '萬' => 1e4,
        '亿' | '億' => 1e8,
        _ => return None,
    })
}

/// The values of a run of numerals: "二十五" is 25, "两百" 200, "一万二千" 12,000,
/// "三点五" 3.5, "二零二四" (digits read one by one) 2024.
fn read_numerals(run: &str) -> Vec<f64> {
    let (whole, fraction) = match run.split_once(['点', '點']) {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (run, None),
    };
    let values: Vec<f64> = whole.chars().filter_map(numeral).collect();
    if values.is_empty() {
        return Vec::new();
    }
    let mut value = if values.iter().all(|v| *v < 10.0) {
        // Digits one by one: a year, a number.
        values.iter().fold(0.0, |n, d| n * 10.0 + d)
    } else {
        let (mut total, mut section, mut digit) = (0.0, 0.0, 0.0);
        for v in values {
            if v < 10.0 {
                digit = v;
            } else if v < 1e4 {
                // "十" alone is 10: its digit is 1.
                section += if digit == 0.0 { 1.0 } else { digit } * v;
                digit = 0.0;
            } else {
                total += (section + digit).max(1.0) * v;
                section = 0.0;
                digit = 0.0;
            }
        }
        total + section + digit
    };
    if let Some(fraction) = fraction {
        let mut scale = 0.1;
        for d in fraction.chars().filter_map(numeral).filter(|d| *d < 10.0) {
            value += d * scale;
            scale /= 10.0;
        }
    }
    vec![value]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numerals_and_digits() {
        for (text, n) in [
            ("帮我预订两个人的餐桌", 2.0),
            ("二十五度", 25.0),
            ("十个", 10.0),
            ("三百五十", 350.0),
            ("一万二千步", 12000.0),
            ("三点五公里", 3.5),
            ("二零二四年", 2024.0),
            ("买10个汉堡，50杯可乐", 50.0),
            ("０.５公斤", 0.5),
            ("一个半小时", 0.5),
            ("半公斤", 0.5),
        ] {
            let numbers = Chinese.numbers(text).unwrap_or_default();
            assert!(numbers.contains(&n), "{n} in {text}: {numbers:?}");
        }
        let radius = Chinese.numbers("半径5厘米").unwrap_or_default();
        assert_eq!(radius, [5.0]);
    }

    #[test]
    fn days_without_their_date() {
        assert!(Chinese.names_day("帮我预订明天两个人的餐桌"));
        assert!(Chinese.names_day("下星期五"));
        assert!(Chinese.names_day("这周末"));
        // "周长" is a circumference.
        assert!(!Chinese.names_day("四个圆的周长"));
        assert!(!Chinese.names_day("帮我预订北京的餐桌"));
    }
}
