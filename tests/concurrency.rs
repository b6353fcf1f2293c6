//! One compiled artifact dispatched from many threads at once: mixed cache hits and
//! re-traces (bindings the artifact's specializations do not admit) give exactly the
//! results of serial use, the counters add up, and nothing deadlocks (a watchdog bounds the
//! whole run).

use std::collections::BTreeMap;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;
use symstride::aot::{random_inputs, verify, Artifact, CompileOptions, Dispatcher, Spec};
use symstride::kernel::ExecConfig;

const THREADS: usize = 8;
const ROUNDS: usize = 25;
const WATCHDOG: Duration = Duration::from_secs(120);

/// The seed spec's bindings (c, h, w): the traced class, size-1 and size-0 classes that
/// need a re-trace, and a few repeats so that threads race on the same misses.
fn bindings() -> Vec<Vec<i64>> {
    let mut v = Vec::new();
    for c in [1, 2, 3, 5] {
        for h in [1, 4, 7] {
            for w in [0, 1, 2, 5] {
                v.push(vec![c, h, w]);
            }
        }
    }
    v
}

/// What one call produced: the instantiated plan (Debug form) or the error message.
type Outcome = Result<String, String>;

fn call(d: &Dispatcher, values: &[i64]) -> Outcome {
    let inputs = d
        .spec()
        .concrete_inputs(values)
        .map_err(|e| e.to_string())?;
    let refs: Vec<(&[i64], &[i64])> = inputs.iter().map(|(s, t)| (&s[..], &t[..])).collect();
    d.plan_for(&refs)
        .map(|(plan, _)| format!("{plan:?}"))
        .map_err(|e| e.to_string())
}

fn seed_artifact() -> Artifact {
    let spec = Spec::from_json(symstride::aot::SEED_SPEC_JSON).unwrap();
    Artifact::compile(&spec, &CompileOptions::default()).unwrap()
}

/// Runs `f` on another thread and fails the test if it does not finish in time (a
/// deadlock would otherwise hang the suite).
fn with_watchdog<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(WATCHDOG)
        .expect("concurrent dispatch did not finish in time (deadlock?)")
}

#[test]
fn concurrent_dispatch_equals_serial() {
    let artifact = seed_artifact();
    let all = bindings();
    // Serial reference on its own dispatcher.
    let serial = Dispatcher::new(artifact.clone()).unwrap();
    let want: BTreeMap<Vec<i64>, Outcome> =
        all.iter().map(|v| (v.clone(), call(&serial, v))).collect();
    assert!(want.values().filter(|o| o.is_ok()).count() >= all.len() / 2);

    let shared = Arc::new(Dispatcher::new(artifact).unwrap());
    let all = Arc::new(all);
    let d = Arc::clone(&shared);
    let a = Arc::clone(&all);
    let results = with_watchdog(move || {
        // All threads start together, so that first-round misses race on the cache.
        let start = std::sync::Barrier::new(THREADS);
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..THREADS)
                .map(|t| {
                    let (d, a, start) = (&d, &a, &start);
                    s.spawn(move || {
                        start.wait();
                        let mut got = Vec::new();
                        for r in 0..ROUNDS {
                            // Each thread walks the bindings in its own order.
                            let n = a.len();
                            for i in 0..n {
                                let v = &a[(i * (2 * t + 1) + r * 7 + t) % n];
                                got.push((v.clone(), call(d, v)));
                            }
                        }
                        got
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().expect("a dispatch thread panicked"))
                .collect::<Vec<_>>()
        })
    });
    assert_eq!(results.len(), THREADS * ROUNDS * all.len());
    for (v, got) in &results {
        assert_eq!(got, &want[v], "binding {v:?}");
    }
    let stats = shared.stats();
    let ok_calls = results.iter().filter(|(_, r)| r.is_ok()).count() as u64;
    assert!(stats.hits + stats.misses >= ok_calls, "{stats:?}");
    assert!(
        stats.retraces >= 1,
        "the bindings include classes to re-trace: {stats:?}"
    );
    assert!(stats.hits > stats.retraces, "{stats:?}");
}

#[test]
fn concurrent_execution_matches_the_reference() {
    let shared = Arc::new(Dispatcher::new(seed_artifact()).unwrap());
    let d = Arc::clone(&shared);
    let checked = with_watchdog(move || {
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|t| {
                    let d = &d;
                    s.spawn(move || {
                        let cfg = ExecConfig {
                            grain_size: 64,
                            ..ExecConfig::default()
                        };
                        let mut n = 0;
                        for (k, values) in [[3, 4, 5], [1, 4, 5], [2, 1, 1], [5, 7, 2], [3, 4, 5]]
                            .iter()
                            .enumerate()
                        {
                            let inputs =
                                random_inputs(d.spec(), values, (t * 10 + k) as u64).unwrap();
                            let refs: Vec<_> = inputs.iter().collect();
                            let ex = d.execute(&refs, &cfg).unwrap();
                            n += verify(d.spec().op, &refs, &ex.output).unwrap();
                        }
                        n
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("an execution thread panicked"))
                .sum::<usize>()
        })
    });
    assert!(checked > 0);
}
