# Turns a text file into a C string: cmake -DIN=file -DOUT=file.c -DNAME=symbol -P embed.cmake
file(READ ${IN} content HEX)
get_filename_component(_name ${IN} NAME)   # no checkout path in the generated file
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${content}")
file(WRITE ${OUT} "/* Generated from web/assets/${_name} by web/embed.cmake: do not edit. */\nconst char ${NAME}[] = {${bytes} 0x00};\n")
