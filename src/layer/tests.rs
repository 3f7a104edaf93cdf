//! Tests of the layer rules, one per rule of SPEC §1.
