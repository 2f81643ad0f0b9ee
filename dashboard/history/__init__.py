"""A queue's history as pages: charts drawn on the server and the table of job names."""
