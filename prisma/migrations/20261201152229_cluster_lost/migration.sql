-- A cluster whose agent went silent past the timeout: no admissions or placements there until
-- its agent sends a complete report again.
ALTER TYPE "ClusterState" ADD VALUE 'LOST';
