"""Chinese, Japanese and Korean."""
