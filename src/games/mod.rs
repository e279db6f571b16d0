//! Games other than Dots-and-Boxes, each self-contained.
pub mod morris;
