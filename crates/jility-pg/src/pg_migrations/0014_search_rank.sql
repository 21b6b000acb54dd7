-- Search reads a workspace's newest tickets first (the newest matches are the ones it
-- ranks when many match): their words in ticket id order, workspace by workspace.
-- Without this the newest rows of one workspace could only be had through the primary
-- key, walking past every other workspace's newer tickets.
CREATE INDEX ticket_search_recent ON ticket_search (workspace_id, ticket_id);
