"""The Airflow layer's triggers: :mod:`.coverage` is the deferrable half of the coverage
sensor. Airflow classes only.
"""
