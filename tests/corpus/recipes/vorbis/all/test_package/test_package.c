#include <stdio.h>
#include <vorbis/vorbisenc.h>

int main(){
  vorbis_comment   vc;
  vorbis_comment_init(&vc);
}
