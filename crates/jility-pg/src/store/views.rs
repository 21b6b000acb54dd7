//! Saved views' statements ([`ViewsTx`] for [`Tx`]): every one names its workspace (`$1`).

use jility_core::store::{NewView, ViewRow, ViewsTx};

use super::*;

const VIEW_COLUMNS: &str = "id, name, query, owner, shared, created_at";

fn view_row(row: &Row) -> StoreResult<ViewRow> {
    Ok(ViewRow {
        id: row.try_get(0).map_err(crate::store::db)?,
        name: row.try_get(1).map_err(crate::store::db)?,
        query: row.try_get(2).map_err(crate::store::db)?,
        owner: row.try_get(3).map_err(crate::store::db)?,
        shared: row.try_get(4).map_err(crate::store::db)?,
        created_at: row.try_get(5).map_err(crate::store::db)?,
    })
}

impl ViewsTx for Tx<'_> {
    fn views(&mut self, owner: &str) -> StoreResult<Vec<ViewRow>> {
        let ws = self.ws;
        let sql = format!(
            "SELECT {VIEW_COLUMNS} FROM views WHERE workspace_id = $1 AND (owner = $2 OR shared) \
             ORDER BY lower(name) COLLATE \"C\", id"
        );
        self.query(&sql, &[&ws, &owner])?
            .iter()
            .map(view_row)
            .collect()
    }

    fn insert_view(&mut self, view: &NewView<'_>) -> StoreResult<ViewRow> {
        let ws = self.ws;
        let sql = format!(
            "INSERT INTO views (workspace_id, name, query, owner, shared, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6) RETURNING {VIEW_COLUMNS}"
        );
        let row = self.query_one(
            &sql,
            &[
                &ws,
                &view.name,
                &view.query,
                &view.owner,
                &view.shared,
                &view.at,
            ],
        )?;
        view_row(&row)
    }

    fn delete_view(&mut self, id: i64) -> StoreResult<bool> {
        let ws = self.ws;
        let n = self.execute(
            "DELETE FROM views WHERE workspace_id = $1 AND id = $2",
            &[&ws, &id],
        )?;
        Ok(n > 0)
    }
}
