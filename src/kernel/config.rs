//! Execution configuration.

/// How kernels split work. Build with `ExecConfig::default()` and the `with_*` setters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecConfig {
    /// Minimum number of elements per parallel task; smaller problems run serially on the
    /// calling thread (no hand-off to rayon). Default 32768, PyTorch's `GRAIN_SIZE`.
    pub grain_size: usize,
    /// Edge of the square tiles used by copies whose operands disagree on the fastest
    /// dimension (in elements). Default 64: measured best for f32 on x86-64 (a 64×64 f32 tile
    /// buffer is 16 KiB, L1-resident; 32 suffers cache-set conflicts at power-of-two strides,
    /// 128 spills L1).
    pub tile: usize,
    /// Upper bound on tasks per rayon thread (more tasks balance load on a busy machine,
    /// fewer reduce scheduling overhead). Default 4.
    pub tasks_per_thread: usize,
    /// Which vector instructions the reduction kernels and the tiled copy may use. Default
    /// [`Simd::Auto`].
    pub simd: Simd,
}

/// Vector instruction sets the reduction kernels and the tiled copy may use (see
/// `kernel::reduce` and `kernel::copy`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Simd {
    /// The best set the CPU reports at run time (AVX2 + FMA on x86-64 when present).
    #[default]
    Auto,
    /// Only the compile-time target's baseline (SSE2 on x86-64): the portable code path,
    /// for tests of the fallback and for measurements.
    Baseline,
}

impl Default for ExecConfig {
    fn default() -> Self {
        ExecConfig {
            grain_size: 32768,
            tile: 64,
            tasks_per_thread: 4,
            simd: Simd::Auto,
        }
    }
}

impl ExecConfig {
    /// `grain_size`, at least 1 (the fields are public, so kernels sanitize what they read).
    pub(crate) fn grain(&self) -> usize {
        self.grain_size.max(1)
    }
    /// `tile`, at least 4.
    pub(crate) fn tile_edge(&self) -> usize {
        self.tile.max(4)
    }
    /// `tasks_per_thread`, at least 1.
    pub(crate) fn tasks(&self) -> usize {
        self.tasks_per_thread.max(1)
    }

    /// Sets [`ExecConfig::grain_size`] (clamped to at least 1).
    pub fn with_grain_size(mut self, grain: usize) -> Self {
        self.grain_size = grain.max(1);
        self
    }
    /// Sets [`ExecConfig::tile`] (clamped to at least 4).
    pub fn with_tile(mut self, tile: usize) -> Self {
        self.tile = tile.max(4);
        self
    }
    /// Sets [`ExecConfig::simd`].
    pub fn with_simd(mut self, simd: Simd) -> Self {
        self.simd = simd;
        self
    }
    /// Sets [`ExecConfig::tasks_per_thread`] (clamped to at least 1).
    pub fn with_tasks_per_thread(mut self, n: usize) -> Self {
        self.tasks_per_thread = n.max(1);
        self
    }
}
