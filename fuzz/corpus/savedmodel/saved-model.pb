3
"serve(
&

serve_onlyPlaceholder*
dtype0:
"train"serve(
&

train_onlyPlaceholder*
dtype0