"""Live monitoring of a production stream (issue 29): sampled claims, confidence sequences,
alerts and the judge-drift alarm. A floor above metrics and below interchange."""
