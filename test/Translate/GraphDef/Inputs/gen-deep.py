# Writes a GraphDef whose func attr nests 200 levels deep.
depth = 200
print('node { name: "n" op: "X" attr { key: "f" value { '
      + 'func { name: "g" attr { key: "a" value { ' * depth
      + '} } } ' * depth + '} } }')
