//! Arithmetic in option values, as fio allows inside parentheses:
//! `size=(3500000/10)`, `bs=(4*1024)`, `size=(1g/3)`, with `+ - * / % ^`,
//! parentheses, unary minus and unit suffixes on the numbers.
//!
//! Evaluation is in `f64` (exact for integers below 2^53); integer options
//! truncate the result toward zero. `^` is exponentiation and binds tighter
//! than `*`; it is right-associative.

use super::error::{ExprProblem, ValueError};

/// Deepest nesting of parentheses, unary signs and `^` (right-associative)
/// in one expression. The parser recurses at each level, so a limit keeps a
/// hostile value from overflowing the stack; fio's (bison) parser gives up
/// at 10,000 levels, no job file needs more than a few.
pub const MAX_NESTING: usize = 64;

/// Converts one number with its (possibly empty) suffix into base units,
/// e.g. `("4", "k")` into 4096 for sizes or `("10", "ms")` into 10_000 µs.
pub type AtomFn<'a> = &'a dyn Fn(&str, &str) -> Result<f64, ValueError>;

/// Evaluates `text` as an arithmetic expression whose numbers are read by
/// `atom`. Errors name what is wrong (e.g. "division by zero in '(1/0)'").
pub fn eval(text: &str, atom: AtomFn) -> Result<f64, ValueError> {
    let mut p = Parser {
        s: text.as_bytes(),
        pos: 0,
        depth: 0,
        text,
        atom,
    };
    let v = p.sum()?;
    p.skip_ws();
    if p.pos != p.s.len() {
        return Err(p.err(ExprProblem::Unexpected {
            rest: text[p.pos..].to_string(),
            pos: p.pos + 1,
        }));
    }
    if !v.is_finite() {
        return Err(p.err(ExprProblem::NotFinite));
    }
    Ok(v)
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    /// Levels of recursion now (see [`MAX_NESTING`]).
    depth: usize,
    text: &'a str,
    atom: AtomFn<'a>,
}

impl Parser<'_> {
    fn err(&self, problem: ExprProblem) -> ValueError {
        ValueError::Expr {
            expr: self.text.to_string(),
            problem,
        }
    }

    /// Runs `f` one level deeper, or fails past [`MAX_NESTING`].
    fn nested(&mut self, f: fn(&mut Self) -> Result<f64, ValueError>) -> Result<f64, ValueError> {
        if self.depth >= MAX_NESTING {
            return Err(self.err(ExprProblem::TooDeep(MAX_NESTING)));
        }
        self.depth += 1;
        let v = f(self);
        self.depth -= 1;
        v
    }

    fn skip_ws(&mut self) {
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.s.get(self.pos).copied()
    }

    fn sum(&mut self) -> Result<f64, ValueError> {
        let mut v = self.product()?;
        while let Some(c @ (b'+' | b'-')) = self.peek() {
            self.pos += 1;
            let r = self.product()?;
            v = if c == b'+' { v + r } else { v - r };
        }
        Ok(v)
    }

    fn product(&mut self) -> Result<f64, ValueError> {
        let mut v = self.power()?;
        while let Some(c @ (b'*' | b'/' | b'%')) = self.peek() {
            self.pos += 1;
            let r = self.power()?;
            v = match c {
                b'*' => v * r,
                _ if r == 0.0 => {
                    let what = if c == b'/' { "division" } else { "modulo" };
                    return Err(self.err(ExprProblem::ByZero(what)));
                }
                b'/' => v / r,
                _ => v % r,
            };
        }
        Ok(v)
    }

    fn power(&mut self) -> Result<f64, ValueError> {
        let base = self.unary()?;
        if self.peek() == Some(b'^') {
            self.pos += 1;
            let exp = self.nested(Self::power)?;
            return Ok(base.powf(exp));
        }
        Ok(base)
    }

    fn unary(&mut self) -> Result<f64, ValueError> {
        match self.peek() {
            Some(b'-') => {
                self.pos += 1;
                Ok(-self.nested(Self::unary)?)
            }
            Some(b'+') => {
                self.pos += 1;
                self.nested(Self::unary)
            }
            _ => self.primary(),
        }
    }

    fn primary(&mut self) -> Result<f64, ValueError> {
        match self.peek() {
            Some(b'(') => {
                self.pos += 1;
                let v = self.nested(Self::sum)?;
                if self.peek() != Some(b')') {
                    return Err(self.err(ExprProblem::MissingParen));
                }
                self.pos += 1;
                Ok(v)
            }
            Some(c) if c.is_ascii_digit() || c == b'.' => {
                let start = self.pos;
                if self.s[self.pos..].starts_with(b"0x") || self.s[self.pos..].starts_with(b"0X") {
                    self.pos += 2;
                    let hs = self.pos;
                    while self.pos < self.s.len() && self.s[self.pos].is_ascii_hexdigit() {
                        self.pos += 1;
                    }
                    let hex = &self.text[hs..self.pos];
                    return u64::from_str_radix(hex, 16).map(|v| v as f64).map_err(|_| {
                        self.err(ExprProblem::BadHex(self.text[start..self.pos].into()))
                    });
                }
                while self.pos < self.s.len()
                    && (self.s[self.pos].is_ascii_digit() || self.s[self.pos] == b'.')
                {
                    self.pos += 1;
                }
                let num = &self.text[start..self.pos];
                let ss = self.pos;
                while self.pos < self.s.len() && self.s[self.pos].is_ascii_alphabetic() {
                    self.pos += 1;
                }
                let suffix = &self.text[ss..self.pos];
                (self.atom)(num, suffix)
            }
            Some(_) => Err(self.err(ExprProblem::ExpectedNumber(
                self.text[self.pos..].to_string(),
            ))),
            None => Err(self.err(ExprProblem::EndsEarly)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(n: &str, s: &str) -> Result<f64, ValueError> {
        if !s.is_empty() {
            return Err(ValueError::NotPlain(format!("{n}{s}")));
        }
        n.parse::<f64>()
            .map_err(|_| ValueError::NotANumber(n.to_string()))
    }

    fn err(text: &str) -> String {
        eval(text, &plain).unwrap_err().to_string()
    }

    #[test]
    fn precedence_and_parens() {
        assert_eq!(eval("1+2*3", &plain).unwrap(), 7.0);
        assert_eq!(eval("(1+2)*3", &plain).unwrap(), 9.0);
        assert_eq!(eval("2^3^2", &plain).unwrap(), 512.0);
        assert_eq!(eval("-2*3", &plain).unwrap(), -6.0);
        assert_eq!(eval("10 % 4", &plain).unwrap(), 2.0);
        assert_eq!(eval("0x10+1", &plain).unwrap(), 17.0);
    }

    #[test]
    fn errors() {
        assert_eq!(err("1/0"), "expression '1/0': division by zero");
        assert!(err("1%0").contains("modulo by zero"));
        assert!(err("(1+2").contains("missing ')'"));
        assert!(err("1+").contains("ends too early"));
        assert!(err("1 2").contains("unexpected '2' at position 3"));
    }

    #[test]
    fn nesting_is_limited() {
        let deep = |n: usize| format!("{}1{}", "(".repeat(n), ")".repeat(n));
        assert_eq!(eval(&deep(MAX_NESTING), &plain).unwrap(), 1.0);
        assert!(err(&deep(MAX_NESTING + 1)).contains("nested more than 64 levels deep"));
        assert!(err(&"-".repeat(100_000)).contains("nested more than 64"));
        assert!(err(&"2^".repeat(100_000)).contains("nested more than 64"));
    }
}
