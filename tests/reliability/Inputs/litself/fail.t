RUN: false
