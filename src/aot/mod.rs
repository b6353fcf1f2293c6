//! (module under construction: see ARCHITECTURE.md)
