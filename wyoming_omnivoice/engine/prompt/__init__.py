"""The prompt: what a request becomes before the decode.

``languages`` (the 646-language table), ``instruct`` (the instruct vocabulary),
``duration`` (the rule duration estimate), ``text_rules`` (upstream's text rules: tags,
chunks, punctuation) and ``builder`` (the tokenizer and the prompt rows).
"""
