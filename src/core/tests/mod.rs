//! Native tests of the core through the scripted `TestHost`: exact event sequences per rule.
