"""spark_nodes package."""
