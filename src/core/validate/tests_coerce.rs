use super::tests_support::*;
