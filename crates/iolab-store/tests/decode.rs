//! The one encoder and decoder of stored results: a result comes back as
//! it was stored, and a run of another kind is refused with both kinds.

use iolab_store::metrics::figures::Summary;
use iolab_store::store::{NewRun, Status, Store, encode, kind};
use iolab_store::sys::environment::Environment;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Thing {
    name: String,
    sizes: BTreeMap<String, u64>,
}

fn put(store: &mut Store, of: &str, json: String) -> i64 {
    let (env, summary) = (Environment::default(), Summary::default());
    store
        .insert(&NewRun {
            kind: of,
            label: None,
            name: format!("{of} x"),
            command: "iolab test".into(),
            env: &env,
            result_json: json,
            summary: &summary,
            sweep: None,
            source_json: None,
            status: Status::Complete,
            hosts: &[],
        })
        .expect("stored")
}

#[test]
fn a_result_comes_back_as_stored_and_another_kind_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("t.db"), true).unwrap();
    let thing = Thing {
        name: "a".into(),
        sizes: BTreeMap::from([("f".into(), 4096)]),
    };
    let id = put(&mut store, kind::EXEC, encode(&thing, "thing").unwrap());
    let run = store.run(id).unwrap();
    assert_eq!(run.decode::<Thing>(kind::EXEC, "thing").unwrap(), thing);

    let e = run.decode::<Thing>(kind::TRACE, "trace").unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("run {id}: trace unreadable: run {id} is a exec, not a trace"),
        "the message names both kinds"
    );
    let tree = put(&mut store, kind::TREE, "{}".into());
    let e = (store.run(tree).unwrap())
        .decode::<Thing>(kind::EXEC, "exec result")
        .unwrap_err();
    assert!(e.to_string().contains("is a tree, not an exec"), "{e}");

    let bad = put(&mut store, kind::EXEC, "{\"name\": 3}".into());
    let e = (store.run(bad).unwrap())
        .decode::<Thing>(kind::EXEC, "exec result")
        .unwrap_err();
    assert!(e.to_string().contains("exec result"), "{e}");
}
