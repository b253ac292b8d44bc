"""Tests of the Airflow layer."""
