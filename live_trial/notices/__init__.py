"""What a person is told and what stays to be checked: watches with their deadlines, the plain-language message of
each outcome and its webhook delivery. It never changes a verdict and never shows internal codes to a person.
"""
