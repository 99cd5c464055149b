"""Greek (`numerals`: cardinals and ordinals by gender and case, which num2words does not
have for Greek)."""
