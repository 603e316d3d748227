pub fn add(a: i32, b: i32) -> i32 {
    a + b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(2, 3), 5);
    }

    #[test]
    fn reports_failure_text() {
        println!("test result: FAILED. (this is only printed text)");
        assert!("error: failed".contains("failed"));
    }

    #[test]
    #[ignore]
    fn slow_test() {
        panic!("ignored");
    }

    #[test]
    #[should_panic(expected = "boom")]
    fn panics_as_expected() {
        panic!("boom");
    }
}
