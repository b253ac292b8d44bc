"""The Airflow layer's operators: covered and pruned spark-submit, register and drop.
Airflow classes only; partition values and keys are parsed in the catalog.
"""
