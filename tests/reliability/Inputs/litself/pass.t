RUN: true
