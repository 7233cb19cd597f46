"""ndkct's reports: the run result (JSON, with a schema), JUnit XML and the HTML report."""
