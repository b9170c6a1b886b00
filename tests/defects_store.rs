//! Regression tests of issue 14 for the results database: one per defect,
//! named after it (defects 6, 7, 11 and 12, the store's part of each).

mod common;
use common::*;
use std::path::Path;

/// A minimal fio result document (one job, one read).
const FIO_RESULT: &str = r#"{"fio version":"fio-3.33","timestamp":1,"jobs":[{"jobname":"d","job options":{"rw":"read"},
    "job_runtime":10,"usr_cpu":1.0,"sys_cpu":2.0,"read":{"io_bytes":4096,"total_ios":1,
    "clat_ns":{"N":1,"min":1000,"max":1000,"mean":1000.0,"stddev":0.0,"percentile":{"50.000000":1000}},
    "lat_ns":{"N":1,"min":1100,"max":1100,"mean":1100.0,"stddev":0.0}},
    "write":{"io_bytes":0,"total_ios":0}}]}"#;

/// Makes an iolab database at `db` holding one run (an imported fio result).
fn iolab_db(db: &Path) {
    let dir = db.parent().unwrap();
    let doc = write_file(dir, "fio-result.json", FIO_RESULT);
    succeed(with_db(db).args(["import", s(&doc), "--label", "one"]));
}

/// Runs `sql` on the database `db` directly (not through iolab).
fn sql(db: &Path, sql: &str) {
    rusqlite::Connection::open(db)
        .unwrap()
        .execute_batch(sql)
        .unwrap();
}

/// A `user_version` iolab never wrote (negative, or past every known
/// schema) is a clear error, never a panic; the file is left alone.
#[test]
fn defect_07_negative_user_version() {
    let (_d, db) = scratch_db();
    iolab_db(&db);
    for v in ["-1", "-2147483648"] {
        sql(&db, &format!("PRAGMA user_version = {v}"));
        let before = std::fs::read(&db).unwrap();
        for args in [&["history"][..], &["show", "1"], &["rm", "1"]] {
            let err = fails_with(
                with_db(&db).args(args),
                code::USAGE,
                &format!("schema version {v} is not one iolab writes"),
            );
            assert_one_line(&err, &[s(&db)]);
        }
        assert_eq!(std::fs::read(&db).unwrap(), before, "left as it was");
    }
    sql(&db, "PRAGMA user_version = 99");
    fails_with(
        with_db(&db).arg("history"),
        code::USAGE,
        "newer than this iolab's",
    );
}
